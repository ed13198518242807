import * as z from '../../schemas/zod.js';
import { Timestamp, Uuid } from '../../schemas/common.js';

/**
 * Access audit shapes (DESIGN D34): a project's audit compares Stripe's subscriptions, ours and the platform's actual
 * state, runs as a job one page per step, and records findings, each with the repair it would make.
 */

/** An audit's statuses: `queued` (no page read yet), `running`, `succeeded` (every page done), `failed`. */
export const ACCESS_AUDIT_STATUSES = ['queued', 'running', 'succeeded', 'failed'] as const;

/**
 * The phases of an audit, in order: Stripe's subscriptions (Stripe-billed projects), the platform's members (Discord:
 * the server's member list), our subscriptions (each entitled member's presence on the platform).
 */
export const ACCESS_AUDIT_PHASES = ['stripe', 'platform', 'ours'] as const;
/** One phase (see {@link ACCESS_AUDIT_PHASES}). */
export type AccessAuditPhase = (typeof ACCESS_AUDIT_PHASES)[number];

/** What a finding found. */
export const FINDING_KINDS = [
  'paid_without_access',
  'access_without_payment',
  'role_missing',
  'role_without_entitlement',
  'status_mismatch',
  'member_left',
] as const;
/** One finding kind (see {@link FINDING_KINDS}). */
export type FindingKind = (typeof FINDING_KINDS)[number];

/**
 * The repairs a finding can make: our subscription follows Stripe (`follow_stripe`), a Stripe subscription we lack is
 * imported (`import_subscription`), a role is given or taken (`grant_role`, `remove_role`), access is given again to an
 * entitled member who left (`grant_access`).
 */
const REPAIR_ACTIONS = ['follow_stripe', 'import_subscription', 'grant_role', 'remove_role', 'grant_access'] as const;
/** One repair action (see {@link REPAIR_ACTIONS}). */
export type RepairAction = (typeof REPAIR_ACTIONS)[number];

/** A finding's statuses: `open`, or `repaired` (by a repair request or the `repair` policy). */
const FINDING_STATUSES = ['open', 'repaired'] as const;

/** A project's audit policies: `report` (findings only, the default) or `repair` (the audit applies each repair). */
export const ACCESS_AUDIT_POLICIES = ['report', 'repair'] as const;
/** One policy (see {@link ACCESS_AUDIT_POLICIES}). */
export type AccessAuditPolicy = (typeof ACCESS_AUDIT_POLICIES)[number];

/** The schedules of a project's audit: `daily` (the default) or `off`. */
export const ACCESS_AUDIT_SCHEDULES = ['daily', 'off'] as const;

/** The objects a finding is about; null where it has none. */
export const FindingObjects = z.object({
  subscription_id: z.nullable(Uuid).check(z.describe('Our subscription.')),
  subscriber_id: z.nullable(Uuid).check(z.describe('Our subscriber.')),
  plan_id: z.nullable(Uuid).check(z.describe('The plan of the subscription.')),
  stripe_subscription_id: z.nullable(z.string()).check(z.describe('The Stripe subscription.')),
  stripe_customer_id: z.nullable(z.string()).check(z.describe('The Stripe customer.')),
  member_id: z.nullable(Uuid).check(z.describe('Our member (platform identity).')),
  platform_user_id: z.nullable(z.string()).check(z.describe('The person on the platform.')),
  platform_role_id: z.nullable(z.string()).check(z.describe('The platform role in question.')),
});
/** A finding's objects (see {@link FindingObjects}). */
export type FindingObjects = z.infer<typeof FindingObjects>;

/** One finding of an audit. */
export const AccessAuditFinding = z
  .object({
    id: Uuid,
    audit_id: Uuid,
    kind: z.enum(FINDING_KINDS),
    status: z.enum(FINDING_STATUSES),
    detail: z.string().check(z.describe('What differs, in words.')),
    objects: FindingObjects,
    repair: z.object({
      action: z.enum(REPAIR_ACTIONS),
      description: z.string().check(z.describe('What the repair does, in words.')),
    }),
    repair_error: z.nullable(z.string()).check(z.describe('Why the last repair attempt failed; null if none did.')),
    repaired_at: z.nullable(Timestamp),
    created_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'AccessAuditFinding' });
/** A finding (see {@link AccessAuditFinding}). */
export type AccessAuditFinding = z.infer<typeof AccessAuditFinding>;

const Count = z.number().check(z.int(), z.gte(0));

/** An access audit job. */
export const AccessAudit = z
  .object({
    id: Uuid,
    project_id: Uuid,
    status: z.enum(ACCESS_AUDIT_STATUSES),
    policy: z
      .enum(ACCESS_AUDIT_POLICIES)
      .check(z.describe('The project\u2019s policy when the audit started: `repair` applies each repair as found.')),
    trigger: z.enum(['request', 'schedule']).check(z.describe('Who started it: a request, or the daily schedule.')),
    counts: z
      .object({
        paid_without_access: Count,
        access_without_payment: Count,
        role_missing: Count,
        role_without_entitlement: Count,
        status_mismatch: Count,
        member_left: Count,
      })
      .check(z.describe('Findings per kind so far.')),
    open_findings: Count.check(z.describe('Findings not repaired yet.')),
    audited: z
      .object({ stripe_subscriptions: Count, platform_members: Count, subscriptions: Count })
      .check(z.describe('Objects compared so far, per phase.')),
    unlinked_members: Count.check(
      z.describe('Platform members seen (Discord: listed; Telegram: recorded by the bot) linked to no subscriber.'),
    ),
    error: z.nullable(z.string()).check(z.describe('Why a failed audit stopped.')),
    created_at: Timestamp,
    completed_at: z.nullable(Timestamp),
  })
  .register(z.globalRegistry, { id: 'AccessAudit' });
/** An audit (see {@link AccessAudit}). */
export type AccessAudit = z.infer<typeof AccessAudit>;

/** The latest audit of a project with a page of its findings. */
export const LatestAccessAudit = z
  .extend(AccessAudit, {
    findings: z.array(AccessAuditFinding).check(z.describe('A page of the findings, in the order found.')),
    next_cursor: z
      .nullable(z.string())
      .check(z.describe('Pass as `cursor` to get the next page of findings; null on the last page.')),
  })
  .register(z.globalRegistry, { id: 'LatestAccessAudit' });
/** The latest audit with findings (see {@link LatestAccessAudit}). */
export type LatestAccessAudit = z.infer<typeof LatestAccessAudit>;

/** The body of `POST /v1/projects/{project_id}/access-audits`. */
export const CreateAccessAuditRequest = z
  .strictObject({
    policy: z
      .optional(z.enum(ACCESS_AUDIT_POLICIES))
      .check(z.describe('Sets the project\u2019s policy from this audit on (default: keep it; `report` at first).')),
    schedule: z
      .optional(z.enum(ACCESS_AUDIT_SCHEDULES))
      .check(z.describe('Sets whether the project is audited daily from now on (default: keep it; daily at first).')),
  })
  .register(z.globalRegistry, { id: 'CreateAccessAuditRequest', examples: [{}, { policy: 'repair' }] });
/** A validated audit request (see {@link CreateAccessAuditRequest}). */
export type CreateAccessAuditRequest = z.infer<typeof CreateAccessAuditRequest>;

/** A project's access audit settings. */
export const AccessAuditSettings = z
  .object({
    project_id: Uuid,
    policy: z
      .enum(ACCESS_AUDIT_POLICIES)
      .check(
        z.describe('`report`: audits record findings only; `repair`: each audit applies the repair of each finding.'),
      ),
    schedule: z
      .enum(ACCESS_AUDIT_SCHEDULES)
      .check(z.describe('`daily`: the project is audited every day; `off`: only on request.')),
    next_audit_at: z
      .nullable(Timestamp)
      .check(z.describe('When the daily audit next looks at the project (with `schedule` off it is skipped then).')),
  })
  .register(z.globalRegistry, { id: 'AccessAuditSettings' });
/** A project's settings (see {@link AccessAuditSettings}). */
export type AccessAuditSettings = z.infer<typeof AccessAuditSettings>;

/** The body of `POST /v1/projects/{project_id}/access-audit-settings`: what to change. */
export const UpdateAccessAuditSettingsRequest = z
  .strictObject({
    policy: z.optional(z.enum(ACCESS_AUDIT_POLICIES)).check(z.describe('The new policy (default: keep it).')),
    schedule: z.optional(z.enum(ACCESS_AUDIT_SCHEDULES)).check(z.describe('The new schedule (default: keep it).')),
  })
  .register(z.globalRegistry, {
    id: 'UpdateAccessAuditSettingsRequest',
    examples: [{ policy: 'repair' }, { schedule: 'off' }],
  });
/** A validated settings change (see {@link UpdateAccessAuditSettingsRequest}). */
export type UpdateAccessAuditSettingsRequest = z.infer<typeof UpdateAccessAuditSettingsRequest>;

/** `{project_id}` path parameters of the audits. */
export const AccessAuditProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project audited.')),
});

/** `{project_id}/{finding_id}` path parameters of one finding of the latest audit. */
export const AccessAuditFindingParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project audited.')),
  finding_id: Uuid.check(z.describe('A finding of the project\u2019s latest audit.')),
});
