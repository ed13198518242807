import { createHash } from 'node:crypto';
import { isoTime } from '../../clock.js';
import type { Principal } from '../../auth/principal.js';
import type { PlatformType } from '../../catalogues/platform-types.js';
import { logger } from '../../logger.js';
import { callPlatform, platformAdapterFor, platformAdapters, type PlatformRuntime } from '../../platforms/adapters.js';
import type { PlatformAdapter, PlatformAdapters, PlatformResourceTarget, PlatformResult, PlatformTarget } from '../../platforms/platform-adapter.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import { itemWithKey, type Item, type Key, type Store } from '../../store/store.js';
import type { Transaction, UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { recordPlatformOutcome, type PendingInviteLinkRevocation } from '../members/platform-retry.js';
import { readMemberItem, toMember } from '../members/repository.js';
import type { Member, MemberInviteLink } from '../members/schema.js';
import type { Plan } from '../plans/schema.js';
import { toProject } from '../projects/repository.js';
import type { Project, ProjectResource } from '../projects/schema.js';
import { subscriberAccessAttribute } from '../subscribers/repository.js';
import type { Subscriber } from '../subscribers/schema.js';
import { scheduleInviteLinksRetry } from './invite-link-retry.js';
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
 * A grant asks the platform before the commit ({@link prepareAccessChange}: its personal invite links go
 * on the subscription, `invite_links`, and in `member.access_granted`); a revocation asks it after the
 * commit ({@link applyPlatformAccess}): the member's removal, and the revocation of the ended access's
 * still-live invite links, with or without a member (their items are marked `revoked_at` in the
 * transition, so a join through one is not linked). Either way outside any transaction: a failure is recorded on the
 * member's `platform_error`, retried durably (`members/platform-retry.ts`, reconciled by
 * `platform-sync.ts`) and never rolls the transition back. A grant's failure for a subscriber without a
 * member is retried by the subscription's own deadline (`invite-link-retry.ts`), scheduled in the transition.
 */

/** A subscription's access change: the subscriber, the plan, the subscription before (null when new) and after. */
export interface AccessChange {
  subscriber: Subscriber;
  plan: Plan;
  before: Subscription | null;
  after: Subscription;
  /** The project, conversion marker and access summary when the caller read them already ({@link accessFactKeys}); read here otherwise. */
  facts?: AccessFacts;
  /** The subscriber is created in the same transaction: it has no other subscription (none is read). */
  newSubscriber?: boolean;
}

/**
 * What an access change reads of the project, of the subscriber's conversion marker and of the
 * subscriber's access summary, which a caller may read in the same BatchGetItem as its own items
 * ({@link accessFactKeys}, {@link accessFactsOf}).
 */
export interface AccessFacts {
  /** The project (its linked resources and platform), or null when it is gone. */
  project: Project | null;
  /** True when the subscriber's conversion marker exists (`member.converted` was already emitted). */
  converted: boolean;
  /**
   * The ids of the subscriber's subscriptions granting access and paid access, from its access summary
   * (`subscriberAccessAttribute`).
   */
  access: SubscriberAccessIds;
}

/** Ids of a subscriber's subscriptions (any order) currently granting access (`granting`) and paid access (`paid`, a subset). */
interface SubscriberAccessIds {
  granting: string[];
  paid: string[];
}

/** The keys of {@link AccessFacts}: the project, the subscriber's conversion marker and its access summary. */
export function accessFactKeys(teamId: string, projectId: string, subscriberId: string): Key[] {
  return [keys.project(teamId, projectId), keys.subscriberConversion(teamId, projectId, subscriberId), keys.subscriberAccess(teamId, projectId, subscriberId)];
}

/** The {@link AccessFacts} among `items` (a BatchGetItem answer that asked for {@link accessFactKeys}). */
export function accessFactsOf(items: readonly Item[], teamId: string, projectId: string, subscriberId: string): AccessFacts {
  const [projectKey, markerKey, summaryKey] = accessFactKeys(teamId, projectId, subscriberId);
  const project = itemWithKey(items, projectKey);
  const summary = itemWithKey(items, summaryKey);
  const ids = (attribute: string) => [...((summary?.[attribute] as Set<string> | undefined) ?? [])];
  const access = { granting: ids(subscriberAccessAttribute.granting), paid: ids(subscriberAccessAttribute.paid) };
  return { project: project ? toProject(project) : null, converted: itemWithKey(items, markerKey) !== undefined, access };
}

/** Reads {@link AccessFacts} with one BatchGetItem. */
async function readAccessFacts(store: Store, teamId: string, projectId: string, subscriberId: string): Promise<AccessFacts> {
  return accessFactsOf(await store.batchGet(accessFactKeys(teamId, projectId, subscriberId)), teamId, projectId, subscriberId);
}

/** True when the subscription's access is paid access (not a free plan's). */
export function isPaidAccess(subscription: Pick<Subscription, 'source'>): boolean {
  return subscription.source !== 'free_plan';
}

/**
 * Every subscription of a subscriber of a project (strongly consistent: the subscriber's index items,
 * then one BatchGet per 100 — none when there is none), in no particular order; without `exceptId` (a
 * subscription id) when given.
 */
export async function subscriptionsOfSubscriber(store: Store, teamId: string, projectId: string, subscriberId: string, exceptId?: string): Promise<Subscription[]> {
  const found: Subscription[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await store.query({
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.subscriberSubscriptionsPartition(teamId, projectId, subscriberId), ':prefix': sortKeyPrefix.subscriberSubscription },
      ConsistentRead: true,
      ExclusiveStartKey: startKey,
    });
    const ids = page.items.map((item) => item.subscription_id as string).filter((id) => id !== exceptId);
    for (let index = 0; index < ids.length; index += 100) {
      const items = await store.batchGet(ids.slice(index, index + 100).map((id) => keys.subscription(teamId, id)));
      found.push(...items.map(toSubscription));
    }
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return found;
}

/** What the subscriber's other subscriptions than the changing one grant: the ids of those with access, and whether one grants paid access. */
interface OthersAccess {
  withAccess: string[];
  paid: boolean;
}

/**
 * {@link OthersAccess} of an access change: none for a subscriber created with the subscription; else
 * from the access summary's sets (`facts.access`: no read).
 */
function othersAccessOf(change: AccessChange, facts: AccessFacts): OthersAccess {
  if (change.newSubscriber) return { withAccess: [], paid: false };
  const id = change.after.id;
  return { withAccess: facts.access.granting.filter((other) => other !== id), paid: facts.access.paid.some((other) => other !== id) };
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
 * commit (their outcome is `outcome`, to record on the member); a revocation's calls are made after it:
 * the member's removal (`removeMember`) and the revocation of the personal invite links the ended access
 * had (`revokeInviteLinks`), with or without a member.
 */
export interface PlatformAccessFollowUp {
  /** The subscriber's member, or null (never joined: only invite links are revoked). */
  member: Member | null;
  /** The project and the subscription whose access changed (named in logs). */
  projectId: string;
  subscriptionId: string;
  platformType: PlatformType;
  action: 'grant_access' | 'revoke_access';
  /** False when the member is not to be removed (none, or banned: the ban keeps them out; a removal would lift it). */
  removeMember: boolean;
  resources: { id: string; kind: string; platform_resource_id: string }[];
  /** The outcome of the grant calls already made (grants only). */
  outcome?: PlatformResult;
  /**
   * The URLs of the personal invite links to revoke (revocations only; bearer secrets, never logged). Their
   * invite-link items were marked `revoked_at` in the transition, so a join through one is not linked.
   */
  revokeInviteLinks: string[];
}

/** How long an invite-link item is kept after the link expires (housekeeping TTL), in seconds. */
const INVITE_LINK_RETENTION_SECONDS = 30 * 24 * 3600;

/** The SHA-256 (hex) of an invite link's URL: the key of its item (never the URL itself in a key). */
export function inviteLinkHash(url: string): string {
  return createHash('sha256').update(url, 'utf8').digest('hex');
}

/** The outcome of asking the platform for a subscriber's access to the project's resources ({@link grantOnPlatform}). */
export interface PlatformGrant {
  /** The personal invite link made per resource id (null: none made, or that resource's call failed). */
  links: Map<string, MemberInviteLink | null>;
  /** The links made, in resource order (what the subscription's `invite_links` holds). */
  inviteLinks: MemberInviteLink[];
  /** The first failure, or ok. */
  outcome: PlatformResult;
  /** Adds the invite-link items (a join through a link then links the member to the subscriber) to a unit of work. */
  record(tx: Transaction): void;
}

/** Who a grant is for: the subscriber (names and owns the links) and the person's platform id, if known. */
export interface PlatformGrantee {
  project_id: string;
  subscriber_id: string;
  platform_user_id: string | null;
}

/**
 * Asks the platform (`adapters`, default the service's) for `grantee`'s access to each resource (DESIGN
 * D22), outside any transaction, each call with the adapter's retries. Never throws: a failure is the
 * outcome (the other resources are still asked). The personal invite links made are returned and, by
 * `record`, written as invite-link items in the caller's unit of work.
 */
export async function grantOnPlatform(
  runtime: PlatformRuntime,
  teamId: string,
  platformType: PlatformType,
  grantee: PlatformGrantee,
  resources: ProjectResource[],
  adapters?: PlatformAdapters,
): Promise<PlatformGrant> {
  const links = new Map<string, MemberInviteLink | null>();
  const items: Record<string, unknown>[] = [];
  let outcome: PlatformResult = { ok: true };
  const adapter = platformAdapterFor(platformType, adapters ?? platformAdapters(runtime));
  const target = { team_id: teamId, ...grantee };
  for (const resource of resources) {
    const result = await callPlatform(() => adapter.grantAccess(target, { kind: resource.kind, platform_resource_id: resource.platform_resource_id }));
    if (!result.ok) {
      if (outcome.ok) outcome = result;
      links.set(resource.id, null);
      continue;
    }
    const link = ('invite_link' in result ? result.invite_link : undefined) ?? null;
    links.set(resource.id, link);
    if (link) {
      const expiresMs = link.expires_at ? Date.parse(link.expires_at) : runtime.clock.nowMs();
      items.push({
        ...keys.inviteLink(teamId, grantee.project_id, inviteLinkHash(link.url)),
        entity: entity.inviteLink,
        team_id: teamId,
        project_id: grantee.project_id,
        subscriber_id: grantee.subscriber_id,
        resource_id: resource.id,
        link_expires_at: link.expires_at,
        expires_at: Math.floor(expiresMs / 1000) + INVITE_LINK_RETENTION_SECONDS,
      });
    }
  }
  const inviteLinks = [...links.values()].filter((link): link is MemberInviteLink => link !== null);
  return { links, inviteLinks, outcome, record: (tx) => items.forEach((item) => tx.put(item)) };
}

/**
 * Asks `adapter` to take `target`'s access to each resource away (DESIGN D22; Telegram: banChatMember
 * then unbanChatMember), outside any transaction. Never throws: the first failure is the outcome.
 */
export async function revokeOnPlatform(adapter: PlatformAdapter, target: PlatformTarget, resources: PlatformResourceTarget[]): Promise<PlatformResult> {
  let outcome: PlatformResult = { ok: true };
  for (const resource of resources) {
    const result = await callPlatform(() => adapter.revokeAccess(target, resource));
    if (!result.ok && outcome.ok) outcome = result;
  }
  return outcome;
}

/** An access change prepared before its transaction ({@link prepareAccessChange}). */
export interface PreparedAccessChange {
  /**
   * The changed subscription with its `invite_links`: the links the grant made when it gained access,
   * none when it lost it. Store and emit this one.
   */
  subscription: Subscription;
  /**
   * Adds the member events, the invite-link items and the conversion marker to the transition's unit of
   * work; returns the platform follow-up to make once it committed (null without a member or resource).
   */
  write(tx: Transaction): PlatformAccessFollowUp | null;
}

/**
 * Prepares the member side of an access change (see the module comment), before the transition's unit
 * of work is written: reads the project (its linked resources), the conversion marker and the
 * subscriber's access summary in one BatchGetItem (or takes them from `change.facts`), then the
 * subscriber's member and what its other subscriptions grant (the summary's sets: no read; a
 * Query of its subscriptions only when the summary does not track them; none for `change.newSubscriber`)
 * — with `change.facts`, only when they can matter: the project has resources, or paid access ends or
 * starts before any conversion (else no member event is emitted and the platform is not asked, whatever
 * they hold). When access starts and no other subscription grants it, asks
 * the platform for it ({@link grantOnPlatform}: a Telegram project gets a personal invite link per chat,
 * put on the subscription and sent in `member.access_granted` as `invite_link`; when that fails for a
 * subscriber without a member, `write` schedules the subscription's durable retry, `invite-link-retry.ts`). When access ends for a
 * banned member or subscriber, the platform is not asked to remove them (the ban keeps them out; a
 * removal would lift it). Returns null when access did not change. `adapters` defaults to the service's ({@link platformAdapters}).
 */
export async function prepareAccessChange(runtime: PlatformRuntime, principal: Principal, change: AccessChange, adapters?: PlatformAdapters): Promise<PreparedAccessChange | null> {
  const store = runtime.store;
  const teamId = principal.teamId;
  const { after, before, subscriber } = change;
  const had = before !== null && hasAccess(before.status);
  const has = hasAccess(after.status);
  if (had === has) return null;
  const projectId = after.project_id;
  const paid = isPaidAccess(after) || (before !== null && isPaidAccess(before));
  // The member and the other subscriptions matter only for events or platform work: a resource to
  // grant or revoke, or paid access starting unconverted or ending (member.converted / member.churned).
  const needsOthers = (facts: AccessFacts) => (facts.project?.resources.length ?? 0) > 0 || (paid && !(has && facts.converted));
  let facts: AccessFacts;
  let member: Member | null = null;
  let others: OthersAccess = { withAccess: [], paid: false };
  if (change.facts) {
    facts = change.facts;
    if (needsOthers(facts)) [member, others] = [await memberOf(store, teamId, subscriber), othersAccessOf(change, facts)];
  } else {
    [facts, member] = await Promise.all([readAccessFacts(store, teamId, projectId, subscriber.id), memberOf(store, teamId, subscriber)]);
    others = othersAccessOf(change, facts);
  }
  const { project, converted } = facts;
  const resources = project?.resources ?? [];
  const { withAccess: othersWithAccess, paid: othersPaid } = others;
  const granting = has && othersWithAccess.length === 0 && project !== null && resources.length > 0;
  const granted = granting
    ? await grantOnPlatform(runtime, teamId, project.platform_type, { project_id: projectId, subscriber_id: subscriber.id, platform_user_id: member?.platform_user_id ?? subscriber.platform_user_id }, resources, adapters)
    : null;
  const subscription: Subscription = { ...after, invite_links: granted?.inviteLinks ?? [] };

  const write = (tx: Transaction): PlatformAccessFollowUp | null => {
    let followUp: PlatformAccessFollowUp | null = null;
    if (othersWithAccess.length === 0) {
      granted?.record(tx);
      // No member to hold the failure (never joined): the subscription's own durable retry, in this
      // transaction, so the links the subscriber needs to join are never lost.
      if (granted && !granted.outcome.ok && member === null) {
        scheduleInviteLinksRetry(tx, teamId, after, granted.outcome.reason, runtime.clock.nowMs());
        logger.warn('invite links not made; retried later', { subscription_id: after.id, project_id: projectId, reason: granted.outcome.reason });
      }
      for (const resource of resources) {
        const data = has ? { member, subscriber, resource, invite_link: granted?.links.get(resource.id) ?? null } : { member, subscriber, resource };
        tx.emit({ type: has ? 'member.access_granted' : 'member.access_revoked', projectId, data });
      }
      // Access ends: the links it made stop working (those still live), and a join through one is no
      // longer linked to the subscriber (its item marked revoked here, in the transition).
      const revokeInviteLinks = !has && before ? liveInviteLinks(before.invite_links, runtime.clock.nowMs()) : [];
      markInviteLinksRevoked(tx, teamId, projectId, revokeInviteLinks, runtime.clock.nowMs());
      // A banned person is kept out by the ban: removing access (ban then unban) would lift it.
      const banned = member?.status === 'banned' || subscriber.status === 'banned';
      const removeMember = member !== null && !has && !banned;
      if (project && resources.length > 0 && ((member && (has || removeMember)) || revokeInviteLinks.length > 0)) {
        followUp = {
          member,
          projectId,
          subscriptionId: after.id,
          platformType: project.platform_type,
          action: has ? 'grant_access' : 'revoke_access',
          removeMember,
          resources: resources.map(({ id, kind, platform_resource_id }) => ({ id, kind, platform_resource_id })),
          ...(granted ? { outcome: granted.outcome } : {}),
          revokeInviteLinks,
        };
      }
    }
    if (!paid || othersPaid) return followUp;
    if (has && !converted) {
      tx.put({ ...keys.subscriberConversion(teamId, projectId, subscriber.id), entity: entity.subscriberConversion, team_id: teamId, subscription_id: after.id, converted_at: after.updated_at });
      tx.emit({ type: 'member.converted', projectId, data: { member, subscriber, subscription } });
    } else if (!has) {
      tx.emit({ type: 'member.churned', projectId, data: { member, subscriber, subscription } });
    }
    return followUp;
  };
  return { subscription, write };
}

/** The links of `links` still working at `nowMs` (epoch milliseconds): those without expiry or expiring later, by URL. */
function liveInviteLinks(links: readonly MemberInviteLink[], nowMs: number): string[] {
  return links.filter((link) => isLiveInviteLink(link, nowMs)).map((link) => link.url);
}

/** Whether `link` still works at `nowMs` (epoch milliseconds): no expiry, or expiring later. */
export function isLiveInviteLink(link: MemberInviteLink, nowMs: number): boolean {
  return link.expires_at === null || Date.parse(link.expires_at) > nowMs;
}

/**
 * Adds to `tx` the marking of the invite-link items of `urls` as revoked (`revoked_at`, ISO 8601): a join
 * through one is then not linked to its subscriber (`hooks/telegram.ts`). Unconditional, so it can never
 * fail the transition; an item gone meanwhile comes back as a bare marker that expires with the retention.
 */
function markInviteLinksRevoked(tx: Transaction, teamId: string, projectId: string, urls: string[], nowMs: number): void {
  for (const url of urls) {
    tx.update(keys.inviteLink(teamId, projectId, inviteLinkHash(url)), {
      expression: 'SET revoked_at = :now, expires_at = if_not_exists(expires_at, :expires)',
      values: { ':now': isoTime(nowMs), ':expires': Math.floor(nowMs / 1000) + INVITE_LINK_RETENTION_SECONDS },
    });
  }
}

/**
 * The linked resource id each invite link of `urls` was made for, by URL: its invite-link item's
 * `resource_id` (one BatchGetItem; none without URLs), absent for a link whose item is gone or names none.
 */
export async function inviteLinkResourceIds(store: Store, teamId: string, projectId: string, urls: readonly string[]): Promise<Map<string, string>> {
  if (urls.length === 0) return new Map();
  const items = await store.batchGet(urls.map((url) => keys.inviteLink(teamId, projectId, inviteLinkHash(url))));
  const ids = new Map<string, string>();
  for (const url of urls) {
    const resourceId = itemWithKey(items, keys.inviteLink(teamId, projectId, inviteLinkHash(url)))?.resource_id;
    if (typeof resourceId === 'string') ids.set(url, resourceId);
  }
  return ids;
}

/**
 * The linked resource each invite link of `urls` was made for (its invite-link item's `resource_id`,
 * read in one BatchGetItem), among `resources`; a link whose item names none is taken as the project's
 * only chat when there is one, and left out otherwise.
 */
async function inviteLinkResources(store: Store, teamId: string, projectId: string, urls: string[], resources: PlatformAccessFollowUp['resources']): Promise<PendingInviteLinkRevocation[]> {
  const ids = await inviteLinkResourceIds(store, teamId, projectId, urls);
  const chats = resources.filter((resource) => resource.kind === 'channel' || resource.kind === 'group');
  const found: PendingInviteLinkRevocation[] = [];
  for (const url of urls) {
    const resource = resources.find((candidate) => candidate.id === ids.get(url)) ?? (chats.length === 1 ? chats[0] : undefined);
    if (resource) found.push({ resource: { kind: resource.kind, platform_resource_id: resource.platform_resource_id }, url });
  }
  return found;
}

/**
 * Revokes each invite link of `revocations` through `adapter` (DESIGN D22; Telegram:
 * revokeChatInviteLink, with the adapter's retries), outside any transaction. Never throws: answers the
 * first failure (or ok) and the revocations that failed.
 */
export async function revokeInviteLinksOnPlatform(
  adapter: PlatformAdapter,
  target: { team_id: string; project_id: string },
  revocations: PendingInviteLinkRevocation[],
): Promise<{ outcome: PlatformResult; failed: PendingInviteLinkRevocation[] }> {
  let outcome: PlatformResult = { ok: true };
  const failed: PendingInviteLinkRevocation[] = [];
  for (const revocation of revocations) {
    const result = await callPlatform(() => adapter.revokeInviteLink(target, revocation.resource, revocation.url));
    if (result.ok) continue;
    failed.push(revocation);
    if (outcome.ok) outcome = result;
  }
  return { outcome, failed };
}

/**
 * Completes a committed access change on the platform (DESIGN D15, D22): a revocation asks the project's
 * platform adapter (`adapters`, default the service's) to remove the member from each resource (with the
 * adapter's retries) unless `removeMember` is false, and to revoke the ended access's invite links
 *; a grant's calls were made before the commit. With a member, the outcome is recorded on
 * it ({@link recordPlatformOutcome}: the first failure as `platform_error`, with its durable retry, the
 * links not revoked kept for that retry; a full success clears an earlier error — for a banned member,
 * only a failure is recorded, so the ban's own error is never cleared). Without a member, a failed
 * revocation is logged (naming the subscription, never a link) and left: the link expires by itself.
 * Never throws: the transition stands whatever the platform answers.
 */
export async function applyPlatformAccess(runtime: UnitOfWorkRuntime & PlatformRuntime, teamId: string, followUp: PlatformAccessFollowUp | null, adapters?: PlatformAdapters): Promise<void> {
  if (!followUp) return;
  const { member } = followUp;
  try {
    let outcome: PlatformResult = followUp.outcome ?? { ok: true };
    let failedLinks: PendingInviteLinkRevocation[] = [];
    if (!followUp.outcome) {
      const adapter = platformAdapterFor(followUp.platformType, adapters ?? platformAdapters(runtime));
      if (member && followUp.removeMember) {
        outcome = await revokeOnPlatform(adapter, { team_id: teamId, project_id: member.project_id, platform_user_id: member.platform_user_id }, followUp.resources);
      }
      if (followUp.revokeInviteLinks.length > 0) {
        const revocations = await inviteLinkResources(runtime.store, teamId, followUp.projectId, followUp.revokeInviteLinks, followUp.resources);
        const links = await revokeInviteLinksOnPlatform(adapter, { team_id: teamId, project_id: followUp.projectId }, revocations);
        failedLinks = links.failed;
        if (!links.outcome.ok && outcome.ok) outcome = links.outcome;
      }
    }
    if (member && (followUp.removeMember || followUp.action === 'grant_access' || !outcome.ok)) {
      await recordPlatformOutcome(runtime, teamId, member, followUp.action, outcome, failedLinks);
    } else if (!outcome.ok) {
      logger.warn('invite links not revoked; they stop working when they expire', {
        subscription_id: followUp.subscriptionId,
        project_id: followUp.projectId,
        links: failedLinks.length,
        reason: outcome.reason,
      });
    }
  } catch (error) {
    logger.error('platform access not recorded', { subscription_id: followUp.subscriptionId, member_id: member?.id ?? null, error: error as Error });
  }
}
