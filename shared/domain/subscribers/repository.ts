import type { Principal } from '../../auth/principal.js';
import { canAccessSubscriberData, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { entity, keys } from '../../store/keys.js';
import type { Item, Store } from '../../store/store.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { toMember, writeMemberChange } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { memberUpdated, readLinkTarget, takeClaim } from './member-link.js';
import { parseStoredSubscriber, parseStoredSubscriberRef, subscriberAccessAttribute, type StoredSubscriberRecord } from './record.js';
import type { CreateSubscriberRequest, Subscriber, SubscriberStatus } from './schema.js';

/**
 * Persistence of subscribers (DESIGN D10, D14, D17): reads, the access summary and creation; lists.ts,
 * changes.ts (over the pure decisions.ts) and member-link.ts hold the rest. A subscriber is one item in its
 * project's subscriber partition (`keys.subscriber`: `TEAM#<team>#PROJECT#<project>#SUBSCRIBERS`,
 * `SUBSCRIBER#<uuid>`, listed in id order); a reference item (`keys.subscriberRef`, holding
 * `project_id`) lets `/v1/subscribers/{id}` find it by id alone. A subscriber with a `platform_user_id`
 * holds that platform user's claim in the project (see `members/repository.ts`), which links it to the
 * member with the same platform user id (`member_id` here, `subscriber_id` there, same transaction).
 *
 * Item attributes besides the public fields: `email` and `phone` (always stored; shown per D10),
 * `email_lower` (prefix search), `revision` (optimistic concurrency of updates, bans and unbans) and one
 * counter per plan the subscriber has a live (non-terminal) subscription to ({@link livePlanAttribute}:
 * the number of such subscriptions, maintained by the subscriptions use cases with `ADD` in the same
 * transaction as every creation, terminal transition and plan change; a counter rather than a set of
 * plan ids because a subscriber may hold two live subscriptions to one plan, and ending one of them must
 * keep the plan). The `plan_id` list filter reads it. There is no `subscriber.*` event family: changes to
 * a subscriber that has a member emit `member.updated`.
 */

/**
 * The name of the stored subscriber's attribute counting its live (non-terminal) subscriptions to plan
 * `planId` (a number; absent = none). Top-level, so `ADD` needs no parent map on items written before it
 * existed; the subscriber list's `plan_id` filter is `<attribute> > 0`.
 */
export function livePlanAttribute(planId: string): string {
  return `live_plan#${planId}`;
}

/** The stored subscriber item as read: the public fields plus `revision` (optimistic concurrency, read through `revisionOf`) and `email_lower` (prefix search). */
export type StoredSubscriber = Item;

/** NOT_FOUND for a subscriber id (absent, foreign or out of scope: the same answer). */
export const subscriberNotFound = (subscriberId: string) => new ProblemError('NOT_FOUND', `No subscriber ${subscriberId}.`);

/**
 * The public subscriber of a stored item (DESIGN D10). `contact: true` adds `email` and `phone` when the
 * subscriber consented (callers pass true only for readers holding `project-user:view`, and for event
 * payloads, which the fan-out redacts per endpoint owner); otherwise the keys are absent.
 */
export function toSubscriber(item: Item, options: { contact: boolean }): Subscriber {
  return publicSubscriber(parseStoredSubscriber(item), options);
}

/** {@link toSubscriber} of a subscriber already parsed through its stored-record schema. */
export function publicSubscriber(stored: StoredSubscriberRecord, options: { contact: boolean }): Subscriber {
  const subscriber: Subscriber = {
    id: stored.id,
    project_id: stored.project_id,
    display_name: stored.display_name ?? null,
    platform_user_id: stored.platform_user_id ?? null,
    consent: stored.consent === true,
    provider_customer_id: stored.provider_customer_id ?? null,
    member_id: stored.member_id ?? null,
    status: stored.status ?? 'active',
    banned_at: stored.banned_at ?? null,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
  if (options.contact && subscriber.consent) {
    subscriber.email = stored.email ?? null;
    subscriber.phone = stored.phone ?? null;
  }
  return subscriber;
}

/**
 * The stored subscriber item of the principal's team (strongly consistent: ref, then item). Errors:
 * NOT_FOUND when absent, of another team, of a project outside the token's project scope, or not the
 * portal principal's own subscriber (D27).
 */
export async function loadSubscriber(store: Store, principal: Principal, subscriberId: string): Promise<StoredSubscriber> {
  const ref = await store.get(keys.subscriberRef(principal.teamId, subscriberId));
  const projectId = ref ? parseStoredSubscriberRef(ref).project_id : null;
  if (!projectId || !canAccessSubscriberData(principal, projectId, subscriberId)) throw subscriberNotFound(subscriberId);
  const item = await store.get(keys.subscriber(principal.teamId, projectId, subscriberId));
  if (!item) throw subscriberNotFound(subscriberId);
  return item;
}

/**
 * Reads one subscriber by id within the principal's team (`GET /v1/subscribers/{id}`; also what
 * subscriptions, payments and access-code redemption use to resolve a subscriber id). The result
 * carries `email`/`phone` when the subscriber consented (D10: the caller decides whether its reader may
 * see them; event payloads may carry them, the fan-out strips them per endpoint owner). Two GetItems
 * (reference, then item). Errors: NOT_FOUND when absent, of another team, or of a project outside the
 * token's project scope (`scope:project:<uuid>`).
 */
export async function getSubscriber(store: Store, principal: Principal, subscriberId: string): Promise<Subscriber> {
  return toSubscriber(await loadSubscriber(store, principal, subscriberId), { contact: true });
}

/** True when the principal may see consented contact data (`project-user:view`, DESIGN D10). */
export function mayReadContact(principal: Principal): boolean {
  return principal.abilities.has('project-user:view');
}

/** The subscriber as `principal` may see it (DESIGN D10): without `project-user:view`, no `email` or `phone` keys. */
export function visibleSubscriber(principal: Principal, subscriber: Subscriber): Subscriber {
  if (mayReadContact(principal)) return subscriber;
  const { email: _email, phone: _phone, ...rest } = subscriber;
  return rest;
}

/**
 * A change of the summary's subscription sets ({@link subscriberAccessAttribute}): subscription ids to
 * add to / delete from the `granting` and `paid` sets (each at most once per transaction; an id both
 * added and deleted is not expected).
 */
export interface SubscriberAccessSetChange {
  add: { granting: string[]; paid: string[] };
  delete: { granting: string[]; paid: string[] };
}

/** True when `change` adds or deletes nothing. */
export function isEmptySetChange(change: SubscriberAccessSetChange): boolean {
  return change.add.granting.length + change.add.paid.length + change.delete.granting.length + change.delete.paid.length === 0;
}

/**
 * What {@link writeSubscriberAccess} writes of the summary: the `status` and/or `member_id` and a change
 * of the subscription sets.
 */
export interface SubscriberAccessFields {
  status?: SubscriberStatus;
  member_id?: string | null;
  /** Subscription ids to add to / delete from the sets (`ADD` / `DELETE`: commutative, no read needed). */
  sets?: SubscriberAccessSetChange;
}

/**
 * Adds to `tx` the subscriber's access summary (`keys.subscriberAccess`): the
 * `status` and/or `member_id` given, as the same transaction writes them on the subscriber item, so the
 * web access check reads them with the subscriber's subscriptions in ONE Query; and the subscription
 * sets' change of a subscription creation or transition in the same transaction
 * ({@link subscriberAccessAttribute}), so an access change reads them in its BatchGetItem. Every write of
 * a subscriber's `status` or `member_id` calls it (creation, ban, unban, a platform user id change, a
 * member joining), and every subscription creation or transition whose access changes. A transaction
 * touches an item once: a caller writing both (a subscriber created with its subscription) passes both
 * in ONE call. Unconditional: the subscriber's or subscription's own write in the transaction carries the
 * conditions.
 */
export function writeSubscriberAccess(tx: Transaction, teamId: string, projectId: string, subscriberId: string, fields: SubscriberAccessFields): void {
  const names: Record<string, string> = { '#entity': 'entity' };
  const values: Record<string, unknown> = { ':entity': entity.subscriberAccess, ':team': teamId, ':subscriber': subscriberId };
  const sets = ['#entity = :entity', 'team_id = :team', 'subscriber_id = :subscriber'];
  if (fields.status !== undefined) {
    names['#status'] = 'status';
    values[':status'] = fields.status;
    sets.push('#status = :status');
  }
  if (fields.member_id !== undefined) {
    values[':member_id'] = fields.member_id;
    sets.push('member_id = :member_id');
  }
  const clauses = [`SET ${sets.join(', ')}`];
  for (const action of ['add', 'delete'] as const) {
    const parts: string[] = [];
    for (const set of ['granting', 'paid'] as const) {
      const ids = fields.sets?.[action][set] ?? [];
      if (ids.length === 0) continue; // DynamoDB rejects an empty set value
      names[`#${set}`] = subscriberAccessAttribute[set];
      values[`:${action}_${set}`] = new Set(ids);
      parts.push(`#${set} :${action}_${set}`);
    }
    if (parts.length) clauses.push(`${action.toUpperCase()} ${parts.join(', ')}`);
  }
  tx.update(keys.subscriberAccess(teamId, projectId, subscriberId), { expression: clauses.join(' '), names, values });
}

/** The stored subscriber item of a new subscriber (revision 0); `email`/`phone` stored whatever the consent. */
export function newSubscriberItem(teamId: string, subscriber: Subscriber, contact: { email: string | null; phone: string | null }): Item {
  const item: Item = {
    ...keys.subscriber(teamId, subscriber.project_id, subscriber.id),
    entity: entity.subscriber,
    ...subscriber,
    email: contact.email,
    phone: contact.phone,
    revision: 0,
  };
  if (contact.email) item.email_lower = contact.email.toLowerCase();
  return item;
}

/** The project item of the principal's team (strongly consistent) after the scope check; NOT_FOUND otherwise. */
async function requireProject(store: Store, principal: Principal, projectId: string): Promise<Item> {
  requireProjectAccess(principal, projectId);
  const project = await store.get(keys.project(principal.teamId, projectId));
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return project;
}

/** Adds to `tx` a check that the project still exists (NOT_FOUND otherwise). */
function checkProject(tx: Transaction, teamId: string, projectId: string): void {
  tx.check(keys.project(teamId, projectId), { condition: 'attribute_exists(pk)', onConditionFailed: () => new ProblemError('NOT_FOUND', `No project ${projectId}.`) });
}

/** A new subscriber ready to be written: what it will read as, and the writes that create it. */
export interface PreparedSubscriber {
  /** The subscriber as it will exist (consented contact data included). */
  subscriber: Subscriber;
  /**
   * Adds the creation to `tx`: the subscriber item (with `options.attributes` merged in, e.g. the
   * subscriptions module's live plan counter when a subscription is created in the same transaction),
   * its reference item, the platform user's claim and the member link with its `member.updated` event.
   * Conditional on the claim unchanged (a lost race: re-prepare and retry) and on the project still
   * existing (NOT_FOUND) — unless `options.projectGuarded`: the caller's own write of the project item
   * (in the same transaction) is conditional on it, and DynamoDB allows one operation per item. The
   * access summary is written tracking its subscription sets from the start, with `options.accessSets`
   * (the sets' change of a subscription created in the same transaction: one write of the summary).
   */
  write(tx: Transaction, options?: { attributes?: Item; projectGuarded?: boolean; accessSets?: SubscriberAccessSetChange }): void;
}

/**
 * Reads what creating a subscriber in `projectId` needs (the platform user's claim and member, when
 * `platform_user_id` is given) and prepares it, without writing (DESIGN D17): the caller commits
 * {@link PreparedSubscriber.write} in its own unit of work — {@link createSubscriber}, or an access-code
 * redemption that creates the subscriber with its subscription (D18). The project is checked by the
 * caller (exists, in the principal's scope). `subscriberId` defaults to a new UUID (pass the same one
 * again when retrying after a lost race). Errors: CONFLICT when another subscriber of the project has
 * the platform user id.
 */
export async function prepareSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: CreateSubscriberRequest,
  subscriberId: string = newUuid(),
): Promise<PreparedSubscriber> {
  const teamId = principal.teamId;
  const platformUserId = input.platform_user_id ?? null;
  const link = platformUserId ? await readLinkTarget(runtime.store, teamId, projectId, platformUserId, subscriberId) : { member: undefined, claimMemberId: undefined };
  const nowIso = isoTime(runtime.clock.nowMs());
  const stored: Subscriber = {
    id: subscriberId,
    project_id: projectId,
    display_name: input.display_name ?? null,
    platform_user_id: platformUserId,
    consent: input.consent ?? false,
    provider_customer_id: input.provider_customer_id ?? null,
    member_id: link.member ? toMember(link.member).id : null,
    status: 'active',
    banned_at: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
  const item = newSubscriberItem(teamId, stored, { email: input.email ?? null, phone: input.phone ?? null });
  const subscriber = toSubscriber(item, { contact: true });
  return {
    subscriber,
    write: (tx, options = {}) => {
      if (!options.projectGuarded) checkProject(tx, teamId, projectId);
      countUsage(tx, teamId, 'subscribers', 1);
      tx.put({ ...options.attributes, ...item }, { condition: 'attribute_not_exists(pk)' });
      tx.put({ ...keys.subscriberRef(teamId, subscriberId), entity: entity.subscriberRef, project_id: projectId }, { condition: 'attribute_not_exists(pk)' });
      writeSubscriberAccess(tx, teamId, projectId, subscriberId, { status: stored.status, member_id: stored.member_id, sets: options.accessSets });
      if (platformUserId) takeClaim(tx, teamId, projectId, platformUserId, subscriberId, link.claimMemberId);
      if (link.member) {
        const member: Member = { ...toMember(link.member), subscriber_id: subscriberId, updated_at: nowIso };
        writeMemberChange(tx, teamId, link.member, member);
        tx.emit(memberUpdated(member, subscriber));
      }
    },
  };
}

/**
 * Creates a subscriber in a project (`POST /v1/projects/{project_id}/subscribers`: a creator's own
 * import or site, DESIGN D17). With a `platform_user_id` it takes that platform user's claim and links
 * the member with that id, if one exists (emitting `member.updated` with the linked subscriber).
 * Returns the subscriber with consented contact data. Counts against the tier's subscriber limit (D20).
 * Errors: NOT_FOUND (project absent, foreign or out of scope); TIER_LIMIT_REACHED; CONFLICT when another subscriber of the project has the platform user id, or after
 * `MAX_ATTEMPTS` lost races.
 */
export async function createSubscriber(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, input: CreateSubscriberRequest): Promise<Subscriber> {
  await requireProject(runtime.store, principal, projectId);
  const subscriberId = newUuid();
  return retryOnLostRace(
    async () => {
      const prepared = await prepareSubscriber(runtime, principal, projectId, input, subscriberId);
      // D20: the team's subscriber counter rises in the same transaction (in `write`), within the tier's limit.
      await withinTierLimit(runtime, principal.teamId, 'subscribers', () => unitOfWork(runtime, principal.teamId, (tx) => prepared.write(tx)));
      return prepared.subscriber;
    },
    { exhausted: () => new ProblemError('CONFLICT', `The platform user ${input.platform_user_id ?? ''} kept changing while this request ran; retry.`) },
  );
}
