import { HOUR_MS, isoTime } from '../../clock.js';
import { completeDeadline, scheduleDeadline, type Deadline } from '../../deadlines/deadline.js';
import { logger } from '../../logger.js';
import type { PlatformResourceTarget, PlatformResult } from '../../platforms/platform-adapter.js';
import { keys } from '../../store/keys.js';
import { outsideRequestScope } from '../../store/request-scope.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { moveSyncDeadline, writeMemberPlatformError } from '../../store/members.js';
import type { Item } from '../../store/requests.js';
import { INVITE_LINK_REVOCATIONS_ATTRIBUTE, parseStoredInviteLinkRevocations } from './record.js';
import type { Member, MemberPlatformError, PlatformAction } from './schema.js';

/**
 * Durable retries of a member's platform calls (DESIGN D15, D22): a failure (`platform_error`: attempts,
 * `next_attempt_at`) is recorded in the SAME transaction that schedules the {@link MEMBER_PLATFORM_SYNC_DEADLINE_KIND}
 * deadline; `platform-sync.ts` reconciles with backoff ({@link platformRetryDelayMs}) up to {@link
 * PLATFORM_SYNC_MAX_ATTEMPTS}, then gives up (`next_attempt_at` null). Success clears both. Invariant: a member with a
 * sync deadline has a `platform_error`.
 */

/**
 * A personal invite link whose revocation failed when the subscriber's access ended, kept
 * on the member's item (attribute {@link INVITE_LINK_REVOCATIONS_ATTRIBUTE}, never shown on the member:
 * `toMember` leaves it out) until the sync deadline revokes it. `url` is a bearer secret: never logged.
 */
export interface PendingInviteLinkRevocation {
  /** The linked resource the link was made for. */
  resource: PlatformResourceTarget;
  url: string;
}

/**
 * The {@link PendingInviteLinkRevocation}s on a stored member item, none when absent (throws StoredRecordError naming
 * its key when they do not match).
 */
export function pendingRevocationsOf(item: Item): PendingInviteLinkRevocation[] {
  return parseStoredInviteLinkRevocations(item)[INVITE_LINK_REVOCATIONS_ATTRIBUTE] ?? [];
}

/** The deadline kind of a member's platform retries (one per member; subject: the member id). */
export const MEMBER_PLATFORM_SYNC_DEADLINE_KIND = 'member.platform_sync' as const;

/** Wait before the first retry, in milliseconds (1 minute); each further failure doubles it. */
export const PLATFORM_SYNC_FIRST_DELAY_MS = 60 * 1000;
/** Longest wait between two attempts, in milliseconds (6 hours). */
const PLATFORM_SYNC_MAX_DELAY_MS = 6 * HOUR_MS;
/**
 * Failed attempts (the first call included) after which retries stop (12: the first call and 11 retries,
 * waiting 1, 2, 4 … 256 minutes then 6 hours twice, about 20.5 hours in all).
 */
export const PLATFORM_SYNC_MAX_ATTEMPTS = 12;

/**
 * The wait in MILLISECONDS before the next attempt after `failedAttempts` (≥ 1) failed ones:
 * {@link PLATFORM_SYNC_FIRST_DELAY_MS} × 2^(failedAttempts − 1), at most {@link PLATFORM_SYNC_MAX_DELAY_MS}.
 */
export function platformRetryDelayMs(failedAttempts: number): number {
  return Math.min(PLATFORM_SYNC_MAX_DELAY_MS, PLATFORM_SYNC_FIRST_DELAY_MS * 2 ** Math.max(0, failedAttempts - 1));
}

/** The sync deadline of `member` due at `dueAt` (ISO 8601). */
function platformSyncDeadline(teamId: string, member: Pick<Member, 'id' | 'project_id'>, dueAt: string): Deadline {
  return {
    teamId,
    kind: MEMBER_PLATFORM_SYNC_DEADLINE_KIND,
    subjectId: member.id,
    projectId: member.project_id,
    dueAt,
  };
}

/**
 * The `platform_error` of a failure of `action` at `nowMs` (epoch MILLISECONDS), the `attempts`-th in a
 * row: with the next attempt's time, or null once `attempts` reached {@link PLATFORM_SYNC_MAX_ATTEMPTS}.
 */
export function platformErrorOf(
  action: PlatformAction,
  reason: string,
  nowMs: number,
  attempts: number,
): MemberPlatformError {
  const gaveUp = attempts >= PLATFORM_SYNC_MAX_ATTEMPTS;
  return {
    action,
    message: reason,
    at: isoTime(nowMs),
    attempts,
    next_attempt_at: gaveUp ? null : isoTime(nowMs + platformRetryDelayMs(attempts)),
  };
}

/**
 * Adds to `tx` the sync deadline's next state: moved to `error.next_attempt_at` (conditional on `current` at its due
 * time), else removed; a concurrent change fails `tx` (`ConditionFailedError`). `attributes`: extra attributes of the
 * moved item. Also used by `subscriptions/invite-link-retry.ts`.
 */
export function writeSyncDeadline(
  tx: Transaction,
  current: Deadline,
  error: MemberPlatformError | null,
  attributes: Record<string, unknown> = {},
): void {
  if (error?.next_attempt_at) {
    moveSyncDeadline(tx, current, error.next_attempt_at, attributes);
  } else completeDeadline(tx, current);
}

/**
 * Records a platform call's outcome on the member after the commit (DESIGN D22): a failure sets `platform_error`
 * (attempt 1) and its sync deadline in one transaction, a success clears both; `revocations` (undefined: kept) are
 * failed invite-link revocations. Status and events unchanged. Never throws (logged); returns the member as recorded.
 */
export async function recordPlatformOutcome(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  member: Member,
  action: PlatformAction,
  result: PlatformResult,
  revocations?: PendingInviteLinkRevocation[],
): Promise<Member> {
  if (result.ok && member.platform_error === null && !revocations?.length) return member;
  const nowMs = runtime.clock.nowMs();
  const nowIso = isoTime(nowMs);
  const error = result.ok ? null : platformErrorOf(action, result.reason, nowMs, 1);
  try {
    // Bookkeeping after the request's effect: never the request's idempotency items.
    await outsideRequestScope(() =>
      unitOfWork(runtime, teamId, (tx) => {
        writeMemberPlatformError(tx, teamId, member, error, nowIso, undefined, revocations, true);
        if (error?.next_attempt_at) scheduleDeadline(tx, platformSyncDeadline(teamId, member, error.next_attempt_at));
        else tx.delete(keys.deadline(teamId, MEMBER_PLATFORM_SYNC_DEADLINE_KIND, member.id));
      }),
    );
  } catch (failure) {
    logger.error('platform outcome not recorded', { member_id: member.id, action, error: failure as Error });
    return member;
  }
  return { ...member, platform_error: error, updated_at: nowIso };
}
