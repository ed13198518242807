import { defineFacts } from '../define-facts.js';

/**
 * Plans' abilities and keys (DESIGN D14): few per project, so team-level items (`TEAM#<team>`,
 * `PLAN#<uuid>`) read by id with one GetItem; a project's plans are found through the sparse GSI,
 * partition `TEAM#<team>#PROJECT#<project>#PLANS`, sort key = creation time then id.
 */
export const plansFacts = defineFacts({
  abilities: {
    category: 'plan',
    label: 'Plans',
    entries: [
      {
        value: 'project-subscription-plan:view-any',
        description: 'List the subscription plans of a project.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project-subscription-plan:view',
        description: 'Read one subscription plan.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      { value: 'project-subscription-plan:create', description: 'Create a subscription plan.', roles: ['developer'] },
      {
        value: 'project-subscription-plan:update',
        description: 'Change, activate or deactivate a subscription plan.',
        roles: ['developer'],
      },
      {
        value: 'project-subscription-plan:delete',
        description: 'Delete a subscription plan that has no subscriptions.',
        roles: [],
      },
      {
        value: 'project-subscription-plan:sync',
        description: 'Sync a plan to the payment-provider catalogue.',
        roles: ['developer'],
      },
    ],
  },
  keys: {
    plan: (teamId: string, planId: string) => ({ pk: `TEAM#${teamId}`, sk: `PLAN#${planId}` }),
    /** GSI partition of a project's plans. */
    projectPlansIndex: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#PLANS`,
    /** GSI sort key of a plan: its creation time (ISO 8601) then its id. */
    projectPlansIndexSortKey: (createdAtIso: string, planId: string) => `${createdAtIso}#${planId}`,
  },
  sortKeyPrefix: { plan: 'PLAN#' },
  entity: { plan: 'plan' },
});
