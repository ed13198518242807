import { defineModule, defineOperation } from '../../operations/definition.js';
import { ProjectIdParams } from '../projects/schema.js';
import { Metrics } from './schema.js';

/**
 * The metrics operations (DESIGN D14, D26): a project's figures and the team's (every project summed),
 * read from counters and daily rollups kept in the transactions of the changes they count. REST only (no
 * tool, no event). Both need `project-subscription:view-any`; the money fields are null without
 * `project-payment:view-any`. The team's figures are team-wide data: a project-scoped token reads its
 * projects' figures one by one.
 */
export const metricsModule = defineModule({
  folder: 'metrics',
  operations: {
    getProjectMetrics: defineOperation({
      id: 'getProjectMetrics',
      summary:
        'Read a project’s metrics: active, trialing and past-due subscriptions, MRR per currency, new and churned subscriptions, revenue, refunds and failed payments of the last 30 days, and a daily series of the last 90 days. Money fields are null without project-payment:view-any.',
      tag: 'Metrics',
      ability: 'project-subscription:view-any',
      teamWide: false,
      params: ProjectIdParams,
      output: Metrics,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/metrics', successStatus: 200 },
    }),
    getTeamMetrics: defineOperation({
      id: 'getTeamMetrics',
      summary:
        'Read the team’s metrics, every project summed (the figures of getProjectMetrics). Money fields are null without project-payment:view-any. A token narrowed to projects reads each project’s metrics instead.',
      tag: 'Metrics',
      ability: 'project-subscription:view-any',
      teamWide: true,
      output: Metrics,
      events: [],
      rest: { method: 'GET', path: '/v1/metrics', successStatus: 200 },
    }),
  },
});
