import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import {
  ACCESS_AUDIT_PHASES,
  ACCESS_AUDIT_POLICIES,
  ACCESS_AUDIT_SCHEDULES,
  ACCESS_AUDIT_STATUSES,
  AccessAuditFinding,
  FINDING_KINDS,
  type AccessAudit,
  type FindingKind,
} from './schema.js';

/** The attribute of one kind's count: `found_<kind>` (a top-level number, grown by ADD). */
export function findingCountAttribute(kind: FindingKind): string {
  return `found_${kind}`;
}

/** The objects compared per phase, as top-level numbers grown by ADD. */
const AUDITED_ATTRIBUTES = [
  'audited_stripe_subscriptions',
  'audited_platform_members',
  'audited_subscriptions',
] as const;
/** One audited-count attribute (see {@link AUDITED_ATTRIBUTES}). */
export type AuditedAttribute = (typeof AUDITED_ATTRIBUTES)[number];

const Count = z.number().check(z.int(), z.nonnegative());
/**
 * The counts; `open_findings` may be below zero for a moment: the `repair` policy repairs a page's findings (one less
 * each) before the page's progress counts them.
 */
const countShape = {
  ...Object.fromEntries(
    [...FINDING_KINDS.map(findingCountAttribute), ...AUDITED_ATTRIBUTES, 'unlinked_members'].map((name) => [
      name,
      Count,
    ]),
  ),
  open_findings: z.number().check(z.int()),
};

/**
 * An audit job as stored (`keys.accessAudit`, DESIGN D34, D14): the public fields with the counts as top-level numbers,
 * its team, the phase and cursor of the next page (a Stripe id, a Discord user id, or our list's cursor), and the pages
 * done (the guard of each progress write, so a repeated page message records nothing twice).
 */
const StoredAccessAuditRecord = z.object({
  id: z.string(),
  team_id: z.string(),
  project_id: z.string(),
  status: z.enum(ACCESS_AUDIT_STATUSES),
  policy: z.enum(ACCESS_AUDIT_POLICIES),
  trigger: z.enum(['request', 'schedule']),
  phase: z.nullable(z.enum(ACCESS_AUDIT_PHASES)),
  cursor: z.nullable(z.string()),
  pages: Count,
  error: z.nullable(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
  completed_at: z.nullable(z.string()),
  ...countShape,
});

/** An audit job as stored (see {@link StoredAccessAuditRecord}). */
export type StoredAccessAudit = z.output<typeof StoredAccessAuditRecord> & Record<string, unknown>;

/** Parses an audit job item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredAccessAudit = recordParser(entity.accessAudit, StoredAccessAuditRecord) as (
  item: unknown,
) => StoredAccessAudit;

/** A finding as stored: the public finding with its team and project. */
const StoredFindingRecord = z.extend(AccessAuditFinding, { team_id: z.string(), project_id: z.string() });
/** A finding as stored (see {@link StoredFindingRecord}). */
export type StoredFinding = z.output<typeof StoredFindingRecord>;
/** Parses a finding item. */
export const parseStoredFinding = recordParser(entity.accessAuditFinding, StoredFindingRecord);

/** A project's audit state (`keys.accessAuditState`): its latest and running audit, policy and schedule. */
const AccessAuditStateRecord = z.object({
  latest_audit_id: z.optional(z.string()),
  running_audit_id: z.optional(z.string()),
  policy: z._default(z.enum(ACCESS_AUDIT_POLICIES), 'report'),
  schedule: z._default(z.enum(ACCESS_AUDIT_SCHEDULES), 'daily'),
  next_audit_at: z.optional(z.string()),
});
/** A project's audit state (see {@link AccessAuditStateRecord}). */
export type AccessAuditState = z.output<typeof AccessAuditStateRecord>;
/** Parses a project's audit state item. */
export const parseAccessAuditState = recordParser(entity.accessAuditState, AccessAuditStateRecord);

/** Zero for every count attribute (a new job's). */
export function zeroCounts(): Record<string, number> & { open_findings: number } {
  return { ...Object.fromEntries(Object.keys(countShape).map((name) => [name, 0])), open_findings: 0 };
}

/** The public view of a stored job. */
export function publicAccessAudit(job: StoredAccessAudit): AccessAudit {
  const count = (name: string) => Number(job[name] ?? 0);
  return {
    id: job.id,
    project_id: job.project_id,
    status: job.status,
    policy: job.policy,
    trigger: job.trigger,
    counts: Object.fromEntries(
      FINDING_KINDS.map((kind) => [kind, count(findingCountAttribute(kind))]),
    ) as AccessAudit['counts'],
    open_findings: Math.max(0, count('open_findings')),
    audited: {
      stripe_subscriptions: count('audited_stripe_subscriptions'),
      platform_members: count('audited_platform_members'),
      subscriptions: count('audited_subscriptions'),
    },
    unlinked_members: count('unlinked_members'),
    error: job.error,
    created_at: job.created_at,
    completed_at: job.completed_at,
  };
}

/** The public view of a stored finding. */
export function publicFinding(stored: StoredFinding): AccessAuditFinding {
  const { team_id: _team, project_id: _project, ...finding } = stored;
  return finding;
}
