import { deadlineItem, type Deadline } from '../../deadlines/deadline.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import type { Item } from '../../store/requests.js';
import type { Transaction } from '../../store/unit-of-work.js';
import { platformErrorOf } from '../members/platform-retry.js';
import { MemberPlatformError } from '../members/schema.js';
import type { Subscription } from './schema.js';

/**
 * Durable retries of a grant's invite links for a subscriber WITHOUT a member (DESIGN D15, D22; with a member,
 * `members/platform-retry.ts`): the failure schedules a {@link SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND} deadline in the
 * transition's transaction, on the members' backoff, holding the failure ({@link INVITE_LINKS_ERROR_ATTRIBUTE}) itself
 * (not the public Subscription). `platform-sync.ts` `applySubscriptionInviteLinks` reconciles.
 */

/** The deadline kind of a subscription's invite-link retries (one per subscription; subject: the subscription id). */
export const SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND = 'subscription.invite_links' as const;

/** The attribute of the deadline item holding the last failure (a `MemberPlatformError`, action `grant_access`). */
export const INVITE_LINKS_ERROR_ATTRIBUTE = 'platform_error' as const;

/** The invite-link deadline of `subscription` due at `dueAt` (ISO 8601). */
function inviteLinksDeadline(
  teamId: string,
  subscription: Pick<Subscription, 'id' | 'project_id'>,
  dueAt: string,
): Deadline {
  return {
    teamId,
    kind: SUBSCRIPTION_INVITE_LINKS_DEADLINE_KIND,
    subjectId: subscription.id,
    projectId: subscription.project_id,
    dueAt,
  };
}

/** What a stored invite-link deadline item holds besides the deadline: the failure recorded (absent until one is). */
const parseInviteLinksFailure = recordParser(
  entity.deadline,
  z.object({ [INVITE_LINKS_ERROR_ATTRIBUTE]: z.optional(MemberPlatformError) }),
);

/**
 * The failure recorded on a stored invite-link deadline item, or null (none recorded). Throws StoredRecordError when it
 * does not match.
 */
export function inviteLinksErrorOf(item: Item): MemberPlatformError | null {
  return parseInviteLinksFailure(item)[INVITE_LINKS_ERROR_ATTRIBUTE] ?? null;
}

/**
 * Adds to `tx` (the granting transition's own unit of work) the first retry of `subscription`'s invite
 * links after the grant failed at `nowMs` (epoch MILLISECONDS) with `reason` (a platform failure text;
 * never a link): the deadline item, due one backoff step later, holding the failure as attempt 1. An
 * unconditional put: a later grant failure of the same subscription starts its retries afresh. Returns
 * the failure recorded.
 */
export function scheduleInviteLinksRetry(
  tx: Transaction,
  teamId: string,
  subscription: Pick<Subscription, 'id' | 'project_id'>,
  reason: string,
  nowMs: number,
): MemberPlatformError {
  const error = platformErrorOf('grant_access', reason, nowMs, 1);
  tx.put({
    ...deadlineItem(inviteLinksDeadline(teamId, subscription, error.next_attempt_at!)),
    [INVITE_LINKS_ERROR_ATTRIBUTE]: error,
  });
  return error;
}
