import { createHash } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import type { PlatformType } from '../../catalogues/platform-types.js';
import { logger } from '../../logger.js';
import { platformAdapterFor, platformAdapters, type PlatformRuntime } from '../../platforms/adapters.js';
import type { PlatformAdapters, PlatformGrantResult, PlatformResult } from '../../platforms/platform-adapter.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import type { Store } from '../../store/store.js';
import type { Transaction, UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { readMemberItem, toMember } from '../members/repository.js';
import type { Member, MemberInviteLink } from '../members/schema.js';
import type { Plan } from '../plans/schema.js';
import { toProject } from '../projects/repository.js';
import type { ProjectResource } from '../projects/schema.js';
import { recordPlatformOutcome } from '../subscribers/moderation.js';
import type { Subscriber } from '../subscribers/schema.js';
import { toSubscription } from './records.js';
import type { Subscription } from './schema.js';
import { hasAccess } from './state-machine.js';

/**
 * The member side of a subscription's access (DESIGN D15, D17), added to the transition's unit of work:
 * when a subscription gains access (enters trialing, active, pending_cancellation or past_due from a
 * status without access, or is created in one) and none of the subscriber's other subscriptions already
 * grants it, `member.access_granted` is emitted once per resource linked to the project; when it loses
 * access and no other subscription still grants it, `member.access_revoked` per resource. Paid access
 * (a subscription that is not on a free plan: `source` other than `free_plan`) also emits
 * `member.converted` the first time the subscriber gains it (a marker item in the subscriber's
 * subscription partition records that it happened) and `member.churned` when the last paid access ends.
 * Payloads carry the subscriber's member (or null when the subscriber has not joined the community).
 * After the commit, {@link applyPlatformAccess} asks the project's platform adapter to grant or revoke
 * the member's access to each resource (outside any transaction; a failure is recorded on the member's
 * `platform_error` and never rolls the transition back).
 */

/** A subscription's access change: the subscriber, the plan, the subscription before (null when new) and after. */
export interface AccessChange {
  subscriber: Subscriber;
  plan: Plan;
  before: Subscription | null;
  after: Subscription;
}

/** True when the subscription's access is paid access (not a free plan's). */
export function isPaidAccess(subscription: Pick<Subscription, 'source'>): boolean {
  return subscription.source !== 'free_plan';
}

/** The subscriber's other subscriptions (strongly consistent: index items, then one BatchGet per 100). */
async function otherSubscriptions(store: Store, teamId: string, change: AccessChange): Promise<Subscription[]> {
  const found: Subscription[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await store.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.subscriberSubscriptionsPartition(teamId, change.after.project_id, change.subscriber.id), ':prefix': sortKeyPrefix.subscriberSubscription },
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    const ids = page.items.map((item) => item.subscription_id as string).filter((id) => id !== change.after.id);
    for (let index = 0; index < ids.length; index += 100) {
      const items = await store.batchGet(ids.slice(index, index + 100).map((id) => keys.subscription(teamId, id)));
      found.push(...items.map(toSubscription));
    }
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return found;
}

/**
 * The subscriber's member (by the subscriber's `member_id`, as the caller read it), or null. A subscriber
 * created in the same transaction (an access-code redemption) links its member in that transaction, so
 * the member read still lacks the link: it is shown linked, as it will be once committed.
 */
async function memberOf(store: Store, teamId: string, subscriber: Subscriber): Promise<Member | null> {
  if (!subscriber.member_id) return null;
  const item = await readMemberItem(store, teamId, subscriber.project_id, subscriber.member_id);
  return item ? { ...toMember(item), subscriber_id: subscriber.id } : null;
}

/**
 * The platform side of a committed access change (DESIGN D15, D22): a grant's calls were made before the
 * commit (their outcome is `outcome`, to record on the member); a revocation's calls are made after it.
 */
export interface PlatformAccessFollowUp {
  member: Member;
  platformType: PlatformType;
  action: 'grant_access' | 'revoke_access';
  resources: { kind: string; platform_resource_id: string }[];
  /** The outcome of the grant calls already made (grants only). */
  outcome?: PlatformResult;
}

/** How long an invite-link item is kept after the link expires (housekeeping TTL), in seconds. */
const INVITE_LINK_RETENTION_SECONDS = 30 * 24 * 3600;

/** The SHA-256 (hex) of an invite link's URL: the key of its item (never the URL itself in a key). */
export function inviteLinkHash(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex');
}

/**
 * Asks the platform for access to each resource before the commit (outside the DynamoDB transaction,
 * which is written only when the unit of work returns): the adapter's calls run with retries; a
 * personal invite link it makes is recorded in `tx` (an invite-link item naming the subscriber, so a join
 * through it links the member) and returned for the event. Never throws: a failure is the outcome.
 */
async function grantBeforeCommit(
  tx: Transaction,
  runtime: PlatformRuntime,
  teamId: string,
  platformType: PlatformType,
  subscriber: Subscriber,
  member: Member | null,
  resources: ProjectResource[],
  adapters: PlatformAdapters | undefined,
): Promise<{ links: Map<string, MemberInviteLink | null>; outcome: PlatformResult }> {
  const links = new Map<string, MemberInviteLink | null>();
  let outcome: PlatformResult = { ok: true };
  const adapter = platformAdapterFor(platformType, adapters ?? platformAdapters(runtime));
  const target = { team_id: teamId, project_id: subscriber.project_id, platform_user_id: member?.platform_user_id ?? subscriber.platform_user_id, subscriber_id: subscriber.id };
  for (const resource of resources) {
    let result: PlatformGrantResult;
    try {
      result = await adapter.grantAccess(target, { kind: resource.kind, platform_resource_id: resource.platform_resource_id });
    } catch (error) {
      logger.warn('platform access call failed unexpectedly', { error: error instanceof Error ? error.name : 'unknown' });
      result = { ok: false, reason: 'The platform call failed unexpectedly; retry later.' };
    }
    if (!result.ok) {
      if (outcome.ok) outcome = result;
      links.set(resource.id, null);
      continue;
    }
    const link = result.invite_link ?? null;
    links.set(resource.id, link);
    if (link) {
      const expiresMs = link.expires_at ? Date.parse(link.expires_at) : runtime.clock.nowMs();
      tx.put({
        ...keys.inviteLink(teamId, subscriber.project_id, inviteLinkHash(link.url)),
        entity: entity.inviteLink,
        team_id: teamId,
        project_id: subscriber.project_id,
        subscriber_id: subscriber.id,
        resource_id: resource.id,
        link_expires_at: link.expires_at,
        expires_at: Math.floor(expiresMs / 1000) + INVITE_LINK_RETENTION_SECONDS,
      });
    }
  }
  return { links, outcome };
}

/**
 * Adds the member events of an access change to `tx` (see the module comment). Reads the project (its
 * linked resources), the subscriber's member and other subscriptions, and the conversion marker;
 * writes the marker on a first conversion. When access starts, the platform is asked for it before the
 * commit (a Telegram project gets a personal invite link per chat, recorded and sent in
 * `member.access_granted` as `invite_link`). Does nothing when access did not change. Returns the platform
 * follow-up to make once the transaction committed (null when there is no member or resource).
 * `adapters` defaults to the service's ({@link platformAdapters}).
 */
export async function emitAccessEvents(tx: Transaction, runtime: PlatformRuntime, principal: Principal, change: AccessChange, adapters?: PlatformAdapters): Promise<PlatformAccessFollowUp | null> {
  const store = runtime.store;
  const teamId = principal.teamId;
  const { after, before, subscriber } = change;
  const had = before !== null && hasAccess(before.status);
  const has = hasAccess(after.status);
  if (had === has) return null;
  const projectId = after.project_id;
  const [projectItem, member, others, marker] = await Promise.all([
    store.get(keys.project(teamId, projectId)),
    memberOf(store, teamId, subscriber),
    otherSubscriptions(store, teamId, change),
    store.get(keys.subscriberConversion(teamId, projectId, subscriber.id)),
  ]);
  const project = projectItem ? toProject(projectItem) : null;
  const resources = project?.resources ?? [];
  const othersWithAccess = others.filter((other) => hasAccess(other.status));
  const paid = isPaidAccess(after) || (before !== null && isPaidAccess(before));
  const othersPaid = othersWithAccess.some(isPaidAccess);
  let followUp: PlatformAccessFollowUp | null = null;
  if (othersWithAccess.length === 0) {
    const granted = has && project && resources.length > 0 ? await grantBeforeCommit(tx, runtime, teamId, project.platform_type, subscriber, member, resources, adapters) : null;
    for (const resource of resources) {
      const data = has ? { member, subscriber, resource, invite_link: granted?.links.get(resource.id) ?? null } : { member, subscriber, resource };
      tx.emit({ type: has ? 'member.access_granted' : 'member.access_revoked', projectId, data });
    }
    if (member && project && resources.length > 0) {
      followUp = {
        member,
        platformType: project.platform_type,
        action: has ? 'grant_access' : 'revoke_access',
        resources: resources.map(({ kind, platform_resource_id }) => ({ kind, platform_resource_id })),
        ...(granted ? { outcome: granted.outcome } : {}),
      };
    }
  }
  if (!paid || othersPaid) return followUp;
  if (has && !marker) {
    tx.put({ ...keys.subscriberConversion(teamId, projectId, subscriber.id), entity: entity.subscriberConversion, team_id: teamId, subscription_id: after.id, converted_at: after.updated_at });
    tx.emit({ type: 'member.converted', projectId, data: { member, subscriber, subscription: after } });
  } else if (!has) {
    tx.emit({ type: 'member.churned', projectId, data: { member, subscriber, subscription: after } });
  }
  return followUp;
}

/**
 * Completes a committed access change on the platform (DESIGN D15, D22): a revocation asks the project's
 * platform adapter (`adapters`, default the service's) to remove the member from each resource (with the
 * adapter's retries); a grant's calls were made before the commit. The outcome is recorded on the member
 * (the first failure as `platform_error`; a full success clears an earlier one). Never throws: the
 * transition stands whatever the platform answers.
 */
export async function applyPlatformAccess(runtime: UnitOfWorkRuntime & PlatformRuntime, teamId: string, followUp: PlatformAccessFollowUp | null, adapters?: PlatformAdapters): Promise<void> {
  if (!followUp) return;
  try {
    let outcome: PlatformResult = followUp.outcome ?? { ok: true };
    if (!followUp.outcome) {
      const adapter = platformAdapterFor(followUp.platformType, adapters ?? platformAdapters(runtime));
      const target = { team_id: teamId, project_id: followUp.member.project_id, platform_user_id: followUp.member.platform_user_id };
      for (const resource of followUp.resources) {
        let result: PlatformResult;
        try {
          result = await adapter.revokeAccess(target, resource);
        } catch (error) {
          logger.warn('platform access call failed unexpectedly', { error: error instanceof Error ? error.name : 'unknown' });
          result = { ok: false, reason: 'The platform call failed unexpectedly; retry later.' };
        }
        if (!result.ok && outcome.ok) outcome = result;
      }
    }
    await recordPlatformOutcome(runtime, teamId, followUp.member, followUp.action, outcome);
  } catch (error) {
    logger.error('platform access not recorded', { member_id: followUp.member.id, error: error as Error });
  }
}
