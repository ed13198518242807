import { defineFacts } from '../define-facts.js';

/**
 * Access codes' abilities and keys (DESIGN D14, D18): one partition per project holding the codes (sort
 * key grouped by batch, so a batch is one key range) and the batches. Each code also has a lookup item
 * keyed by a SHA-256 of its normalized code, never the code itself (uniqueness per project, redemption by
 * code), and a reference item keyed by its id (a read by id alone finds its project and batch); both are
 * read by key only, so each has a partition of its own.
 */
export const accessCodesFacts = defineFacts({
  abilities: {
    category: 'access_code',
    label: 'Access codes',
    entries: [
      {
        value: 'project-access-code:view-any',
        description: 'List the access codes of a project.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project-access-code:view',
        description: 'Read one access code and its redemption.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      { value: 'project-access-code:create', description: 'Generate a batch of access codes.', roles: ['support'] },
      { value: 'project-access-code:revoke', description: 'Revoke an unredeemed access code.', roles: ['support'] },
    ],
  },
  keys: {
    accessCodePartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE`,
    accessCode: (teamId: string, projectId: string, batchId: string, codeId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE`,
      sk: `ACCESS_CODE#${batchId}#${codeId}`,
    }),
    accessCodeBatch: (teamId: string, projectId: string, batchId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE`,
      sk: `ACCESS_CODE_BATCH#${batchId}`,
    }),
    accessCodeLookup: (teamId: string, projectId: string, codeSha256: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#ACCESS_CODE_LOOKUP#${codeSha256}`,
      sk: 'ACCESS_CODE_LOOKUP',
    }),
    accessCodeRef: (teamId: string, codeId: string) => ({
      pk: `TEAM#${teamId}#ACCESS_CODE#${codeId}`,
      sk: 'ACCESS_CODE_REF',
    }),
    /**
     * A batch generated in the background for an MCP task (a batch above 100 codes), in its team's partition (the
     * task id names the job only); TTL 24 hours.
     */
    accessCodeBatchJob: (teamId: string, jobId: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `ACCESS_CODE_BATCH_JOB#${jobId}`,
    }),
    /** Sparse GSI partition of the batch jobs still running. */
    runningAccessCodeBatchJobsIndex: 'ACCESS_CODE_BATCH_JOB_RUNNING',
    /**
     * A redemption of a code by a subscriber, beside the code's reference item (the code's own small
     * partition): its conditional put keeps a code to one redemption per subscriber (D18).
     */
    accessCodeRedemption: (teamId: string, codeId: string, subscriberId: string) => ({
      pk: `TEAM#${teamId}#ACCESS_CODE#${codeId}`,
      sk: `REDEMPTION#${subscriberId}`,
    }),
  },
  sortKeyPrefix: {
    /** Codes of a project (`accessCodeInBatch` narrows to one batch). */
    accessCode: 'ACCESS_CODE#',
    accessCodeInBatch: (batchId: string) => `ACCESS_CODE#${batchId}#`,
  },
  entity: {
    accessCode: 'access_code',
    accessCodeBatch: 'access_code_batch',
    accessCodeLookup: 'access_code_lookup',
    accessCodeRef: 'access_code_ref',
    accessCodeRedemption: 'access_code_redemption',
    accessCodeBatchJob: 'access_code_batch_job',
  },
});
