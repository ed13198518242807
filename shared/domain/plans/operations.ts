import { defineModule, defineOperation } from '../../operations/definition.js';
import { Deleted } from '../../schemas/common.js';
import {
  CreatePlanRequest,
  ListPlansQuery,
  Plan,
  PlanIdParams,
  PlanList,
  PlanProjectParams,
  UpdatePlanRequest,
} from './schema.js';

/**
 * The subscription plan operations (DESIGN D13, D16, D22). A project's plans are listed and created
 * under the project; one plan is addressed by its id alone (`/v1/plans/{id}`) within the team.
 */
export const plansModule = defineModule({
  folder: 'plans',
  operations: {
    listPlans: defineOperation({
      id: 'listPlans',
      summary: 'List a project’s subscription plans, oldest first, optionally by status.',
      tag: 'Plans',
      ability: 'project-subscription-plan:view-any',
      teamWide: false,
      params: PlanProjectParams,
      query: ListPlansQuery,
      output: PlanList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/plans', successStatus: 200 },
      tool: {
        name: 'list_plans',
        title: 'List plans',
        kind: 'read',
        description: 'List a project\u2019s subscription plans, optionally only active or inactive ones.',
      },
    }),
    createPlan: defineOperation({
      id: 'createPlan',
      summary:
        'Create a subscription plan in a project (emits plan.created; with a payment provider connected, also plan.synced or plan.sync_failed).',
      tag: 'Plans',
      ability: 'project-subscription-plan:create',
      teamWide: false,
      params: PlanProjectParams,
      body: CreatePlanRequest,
      output: Plan,
      events: ['plan.created', 'plan.synced', 'plan.sync_failed'],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/plans', successStatus: 201 },
      tool: {
        name: 'create_plan',
        title: 'Create plan',
        kind: 'create',
        description:
          'Create a subscription plan in a project: price in minor units, ISO 4217 currency, interval (week, month, year, or one_time with access_days).',
      },
    }),
    getPlan: defineOperation({
      id: 'getPlan',
      summary: 'Read one subscription plan, with its price versions and provider sync state.',
      tag: 'Plans',
      ability: 'project-subscription-plan:view',
      teamWide: false,
      params: PlanIdParams,
      output: Plan,
      events: [],
      rest: { method: 'GET', path: '/v1/plans/{id}', successStatus: 200 },
      tool: { name: 'get_plan', title: 'Get plan', kind: 'read', description: 'Read one subscription plan.' },
    }),
    updatePlan: defineOperation({
      id: 'updatePlan',
      summary:
        'Change a plan’s name, description, price, trial or status (emits plan.updated, plan.activated or plan.deactivated); a price change on a plan with subscriptions adds a price version.',
      tag: 'Plans',
      ability: 'project-subscription-plan:update',
      teamWide: false,
      params: PlanIdParams,
      body: UpdatePlanRequest,
      output: Plan,
      events: ['plan.updated', 'plan.activated', 'plan.deactivated', 'plan.synced', 'plan.sync_failed'],
      rest: { method: 'POST', path: '/v1/plans/{id}', successStatus: 200 },
      tool: {
        name: 'update_plan',
        title: 'Update plan',
        kind: 'update',
        description: 'Change a plan\u2019s name, description, price or trial, or activate or deactivate it (status).',
      },
    }),
    deletePlan: defineOperation({
      id: 'deletePlan',
      summary: 'Delete a plan that has no live subscriptions (CONFLICT otherwise; deactivate it instead).',
      tag: 'Plans',
      ability: 'project-subscription-plan:delete',
      teamWide: false,
      params: PlanIdParams,
      output: Deleted,
      events: [],
      rest: { method: 'DELETE', path: '/v1/plans/{id}', successStatus: 200 },
    }),
    activatePlan: defineOperation({
      id: 'activatePlan',
      summary: 'Open an inactive plan to new subscriptions (emits plan.activated).',
      tag: 'Plans',
      ability: 'project-subscription-plan:update',
      teamWide: false,
      params: PlanIdParams,
      output: Plan,
      events: ['plan.activated'],
      rest: { method: 'POST', path: '/v1/plans/{id}/activate', successStatus: 200 },
    }),
    deactivatePlan: defineOperation({
      id: 'deactivatePlan',
      summary: 'Close an active plan to new subscriptions; existing ones continue (emits plan.deactivated).',
      tag: 'Plans',
      ability: 'project-subscription-plan:update',
      teamWide: false,
      params: PlanIdParams,
      output: Plan,
      events: ['plan.deactivated'],
      rest: { method: 'POST', path: '/v1/plans/{id}/deactivate', successStatus: 200 },
    }),
    syncPlan: defineOperation({
      id: 'syncPlan',
      summary:
        'Sync a plan to its project’s payment provider now (emits plan.synced or plan.sync_failed; a failure is recorded on the plan, not answered as an error).',
      tag: 'Plans',
      ability: 'project-subscription-plan:sync',
      teamWide: false,
      params: PlanIdParams,
      output: Plan,
      events: ['plan.synced', 'plan.sync_failed'],
      rest: { method: 'POST', path: '/v1/plans/{id}/sync', successStatus: 200 },
    }),
  },
});
