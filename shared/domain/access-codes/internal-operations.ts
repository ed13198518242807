import { defineInternalOperation } from '../../operations/definition.js';
import { ProjectIdParams } from '../projects/schema.js';
import { AccessCodeBatchJob, AccessCodeBatchJobIdParams } from './batch-job.js';
import { GenerateAccessCodesRequest } from './schema.js';

/**
 * The access codes' internal operations (DESIGN D5, D18, D35): a batch above 100 codes generated in the background for
 * an MCP client that declares the Tasks extension (`generate_access_codes` answers a task), and the task's cancel. No
 * route, no tool: the tool call and `tasks/cancel` run them on surface `mcp`.
 */
export const accessCodesInternalOperations = {
  startAccessCodeBatchJob: defineInternalOperation({
    id: 'startAccessCodeBatchJob',
    summary:
      'Start generating a batch of access codes in the background: the request is checked as for an inline generation, then a job writes the batch (emits access_code.batch_generated once active).',
    tag: 'Access codes',
    ability: 'project-access-code:create',
    teamWide: false,
    params: ProjectIdParams,
    body: GenerateAccessCodesRequest,
    output: AccessCodeBatchJob,
    events: ['access_code.batch_generated'],
    write: true,
  }),
  cancelAccessCodeBatchJob: defineInternalOperation({
    id: 'cancelAccessCodeBatchJob',
    summary:
      'Cancel a running access code batch job: no further codes are written and those written are deleted (the batch never turns active). A cancelled job is returned as it is; a completed or failed one is a conflict.',
    tag: 'Access codes',
    ability: 'project-access-code:create',
    teamWide: false,
    params: AccessCodeBatchJobIdParams,
    output: AccessCodeBatchJob,
    events: [],
    write: true,
  }),
};
