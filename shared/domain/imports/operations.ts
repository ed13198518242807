import { defineModule, defineOperation } from '../../operations/definition.js';
import { ListQuery } from '../../schemas/common.js';
import { CreateImportRequest, Import, ImportIdParams, ImportList, ImportProjectParams } from './schema.js';

/**
 * The import operations (DESIGN D34): REST only (the interface fixes the tools) and on the plan abilities (it fixes
 * the abilities too): an import creates plans first of all, so starting one needs `project-subscription-plan:create`;
 * reading the jobs `project-subscription-plan:view-any`. The import's own writes emit the events of what it creates.
 */
export const importsModule = defineModule({
  folder: 'imports',
  operations: {
    createImport: defineOperation({
      id: 'createImport',
      summary:
        'Import the connected Stripe account: prices become plans, customers subscribers, subscriptions subscriptions with Stripe\u2019s statuses and periods, charging nobody and changing nothing at Stripe; `dry_run` only reports. Answers 202 with the job.',
      tag: 'Plans',
      ability: 'project-subscription-plan:create',
      teamWide: false,
      params: ImportProjectParams,
      body: CreateImportRequest,
      output: Import,
      events: [],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/imports', successStatus: 202 },
    }),
    listImports: defineOperation({
      id: 'listImports',
      summary: 'List the imports of a project, newest first, with their counts.',
      tag: 'Plans',
      ability: 'project-subscription-plan:view-any',
      teamWide: false,
      params: ImportProjectParams,
      query: ListQuery,
      output: ImportList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/imports', successStatus: 200 },
    }),
    getImport: defineOperation({
      id: 'getImport',
      summary: 'Get an import: its status, counts per kind, skipped objects with reasons, and cursor.',
      tag: 'Plans',
      ability: 'project-subscription-plan:view-any',
      teamWide: false,
      params: ImportIdParams,
      output: Import,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/imports/{import_id}', successStatus: 200 },
    }),
  },
});
