import { defineModule, defineOperation } from '../../operations/definition.js';
import { ListQuery } from '../../schemas/common.js';
import {
  AccessAudit,
  AccessAuditFinding,
  AccessAuditFindingParams,
  AccessAuditProjectParams,
  AccessAuditSettings,
  CreateAccessAuditRequest,
  LatestAccessAudit,
  UpdateAccessAuditSettingsRequest,
} from './schema.js';

/**
 * The access audit operations (DESIGN D34): REST only (the interface fixes the tools) and on the subscription abilities
 * (it fixes the abilities too): an audit compares subscriptions and its repairs change them and their access, so
 * starting one, repairing a finding or changing the settings needs `project-subscription:update`, reading the latest or
 * the settings `project-subscription:view-any`. Repairs emit the events of the changes they make.
 */
export const accessAuditsModule = defineModule({
  folder: 'access-audits',
  operations: {
    createAccessAudit: defineOperation({
      id: 'createAccessAudit',
      summary:
        'Audit a project now: Stripe\u2019s subscriptions (Stripe-billed projects), ours and the platform\u2019s actual members and roles are compared, and each difference is recorded with the repair it would make. Runs in the background (202 with the audit); one audit of a project runs at a time (409 names the running one). `policy` and `schedule` set the project\u2019s policy (`report` or `repair`) and daily audit from now on.',
      tag: 'Subscriptions',
      ability: 'project-subscription:update',
      teamWide: false,
      params: AccessAuditProjectParams,
      body: CreateAccessAuditRequest,
      output: AccessAudit,
      events: [],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/access-audits', successStatus: 202 },
    }),
    getLatestAccessAudit: defineOperation({
      id: 'getLatestAccessAudit',
      summary: 'Get the latest access audit of a project: its status, findings per kind and a page of its findings.',
      tag: 'Subscriptions',
      ability: 'project-subscription:view-any',
      teamWide: false,
      params: AccessAuditProjectParams,
      query: ListQuery,
      output: LatestAccessAudit,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/access-audits/latest', successStatus: 200 },
    }),
    repairAccessAuditFinding: defineOperation({
      id: 'repairAccessAuditFinding',
      summary:
        'Repair a finding of the latest access audit: our subscription follows Stripe (nothing is charged or changed at Stripe), or platform access follows our entitlements. Answers the repaired finding.',
      tag: 'Subscriptions',
      ability: 'project-subscription:update',
      teamWide: false,
      params: AccessAuditFindingParams,
      output: AccessAuditFinding,
      events: [],
      callsProvider: true,
      rest: {
        method: 'POST',
        path: '/v1/projects/{project_id}/access-audits/findings/{finding_id}/repair',
        successStatus: 200,
      },
    }),
    getAccessAuditSettings: defineOperation({
      id: 'getAccessAuditSettings',
      summary:
        'Get a project\u2019s access audit settings: its policy (`report` or `repair`), whether it is audited daily and when the daily audit next looks at it.',
      tag: 'Subscriptions',
      ability: 'project-subscription:view-any',
      teamWide: false,
      params: AccessAuditProjectParams,
      output: AccessAuditSettings,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/access-audit-settings', successStatus: 200 },
    }),
    updateAccessAuditSettings: defineOperation({
      id: 'updateAccessAuditSettings',
      summary:
        'Change a project\u2019s access audit policy or daily schedule without running an audit; a field left out keeps its value. Answers the settings.',
      tag: 'Subscriptions',
      ability: 'project-subscription:update',
      teamWide: false,
      params: AccessAuditProjectParams,
      body: UpdateAccessAuditSettingsRequest,
      output: AccessAuditSettings,
      events: [],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/access-audit-settings', successStatus: 200 },
    }),
  },
});
