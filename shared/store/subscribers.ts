import { emailSha256 } from '../auth/principal.js';
import { platformUserKey } from '../domain/members/repository.js';
import {
  livePlanAttribute,
  parseStoredSubscriberRef,
  subscriberAccessAttribute,
} from '../domain/subscribers/record.js';
import type { Member } from '../domain/members/schema.js';
import type { Subscriber, SubscriberStatus } from '../domain/subscribers/schema.js';
import { ITEM_ABSENT_CONDITION, existsAtRevisionOf, setFields, type Condition } from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { listFilter, queryPage, type Page } from './pages.js';
import { revisionOf } from './records.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';
import { claimStatusCopy } from './members.js';

/**
 * The subscriber store (DESIGN D10, D14, D17): a subscriber item per subscriber in its project's partition
 * (`revision`, `email_lower` for prefix search), a reference by id naming its project, the access summary
 * (`keys.subscriberAccess`), the platform user's claim (taken and released in the subscriber's transaction) and the
 * e-mail lookup item (`keys.subscriberEmail`, written and removed in the transaction that sets the address).
 */

/** The most subscribers {@link subscriberStore.idsWithEmail} returns for one address. */
const MOST_SUBSCRIBERS_PER_EMAIL = 5;

/**
 * The attribute (true) of a subscriber a free join created whose address is not confirmed yet: it does not count
 * against the team's tier (DESIGN D20) until {@link subscriberStore.confirmAddress} removes it.
 */
export const AWAITING_CONFIRMATION = 'awaiting_confirmation';

/** The e-mail lookup item of `subscriberId`'s address `email` in its project. */
function emailLookupItem(teamId: string, projectId: string, subscriberId: string, email: string): Item {
  return {
    ...keys.subscriberEmail(teamId, projectId, emailSha256(email), subscriberId),
    entity: entity.subscriberEmail,
    subscriber_id: subscriberId,
  };
}

/**
 * A change of the summary's subscription sets: subscription ids to add to / delete from the `granting` and
 * `paid` sets (each at most once per transaction; an id both added and deleted is not expected).
 */
export interface SubscriberAccessSetChange {
  add: { granting: string[]; paid: string[] };
  delete: { granting: string[]; paid: string[] };
}

/** What an access-summary write sets: the `status` and/or `member_id`, and a change of the subscription sets. */
export interface SubscriberAccessFields {
  status?: SubscriberStatus;
  member_id?: string | null;
  /** Subscription ids to add to / delete from the sets (`ADD` / `DELETE`: commutative, no read needed). */
  sets?: SubscriberAccessSetChange;
}

/** The condition "the claim's member is still `memberId` (or still none)". */
function claimMemberCondition(memberId: string | null | undefined): Required<Pick<Condition, 'expression' | 'values'>> {
  return memberId
    ? { expression: 'member_id = :claim_member', values: { ':claim_member': memberId } }
    : { expression: 'attribute_not_exists(member_id)', values: {} };
}

/**
 * The subscriber store adapter: reads, lookups and the list of a project's subscribers (Store port), a new
 * subscriber's item, and the writes of a subscriber, its access summary and claims, added to a transaction.
 */
export const subscriberStore = {
  /** The project of subscriber `subscriberId` of the team, from its reference item (strongly consistent), or null. */
  async projectOf(store: Store, teamId: string, subscriberId: string): Promise<string | null> {
    const ref = await store.get(keys.subscriberRef(teamId, subscriberId));
    return ref ? parseStoredSubscriberRef(ref).project_id : null;
  },

  /** The stored subscriber item (strongly consistent), or undefined. */
  async read(store: Store, teamId: string, projectId: string, subscriberId: string): Promise<Item | undefined> {
    return store.get(keys.subscriber(teamId, projectId, subscriberId));
  },

  /** True when the project has subscriber `subscriberId` (strongly consistent, key only). */
  async exists(store: Store, teamId: string, projectId: string, subscriberId: string): Promise<boolean> {
    return (await store.get(keys.subscriber(teamId, projectId, subscriberId), { projection: 'pk' })) !== undefined;
  },

  /**
   * The ids of the project's subscribers whose address is `email` (compared trimmed and in lower case), at most a few
   * (strongly consistent, one Query of the address's lookup partition).
   */
  async idsWithEmail(store: Store, teamId: string, projectId: string, email: string): Promise<string[]> {
    const page = await store.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.subscriberEmailPartition(teamId, projectId, emailSha256(email)) },
      Limit: MOST_SUBSCRIBERS_PER_EMAIL,
      ConsistentRead: true,
    });
    return page.items.map((item) => String(item.subscriber_id));
  },

  /**
   * One page of a project's subscribers in id order (D12, strongly consistent), optionally filtered by DynamoDB
   * (a page may be short while `next_cursor` is set): `status`, `planId` (a live subscription to that plan),
   * `emailPrefix` (lower case). Errors: VALIDATION_FAILED (cursor of another list).
   */
  async listPage<T>(
    store: Store,
    teamId: string,
    projectId: string,
    query: { limit: number; cursor?: string; status?: SubscriberStatus; planId?: string; emailPrefix?: string },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    const conditions: string[] = [];
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const status = listFilter([{ attribute: 'status', equals: query.status }]);
    if (status) {
      conditions.push(status.expression);
      Object.assign(names, status.names);
      Object.assign(values, status.values);
    }
    if (query.planId) {
      conditions.push('#live_plan > :no_live_subscription');
      names['#live_plan'] = livePlanAttribute(query.planId);
      values[':no_live_subscription'] = 0;
    }
    if (query.emailPrefix) {
      conditions.push('begins_with(email_lower, :email_prefix)');
      values[':email_prefix'] = query.emailPrefix;
    }
    return queryPage(store, {
      partition: keys.subscriberPartition(teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.subscriber,
      limit: query.limit,
      cursor: query.cursor,
      consistent: true,
      map,
      filter: conditions.length
        ? { expression: conditions.join(' AND '), names: Object.keys(names).length ? names : undefined, values }
        : undefined,
    });
  },

  /**
   * The stored item of `subscriber` (revision 0) with its contact data (stored whatever the consent) and `email_lower`.
   */
  newItem(teamId: string, subscriber: Subscriber, contact: { email: string | null; phone: string | null }): Item {
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
  },

  /**
   * Adds to `tx` a new subscriber item ({@link subscriberStore.newItem}, `attributes` under it) and its reference, each
   * only if absent.
   */
  create(tx: Transaction, teamId: string, item: Item, subscriber: Subscriber, attributes?: Item): void {
    tx.put({ ...attributes, ...item }, { condition: ITEM_ABSENT_CONDITION.expression });
    if (typeof item.email === 'string')
      tx.put(emailLookupItem(teamId, subscriber.project_id, subscriber.id, item.email));
    tx.put(
      { ...keys.subscriberRef(teamId, subscriber.id), entity: entity.subscriberRef, project_id: subscriber.project_id },
      { condition: ITEM_ABSENT_CONDITION.expression },
    );
  },

  /**
   * Adds to `tx` the confirmation of the address of a subscriber a free join created ({@link AWAITING_CONFIRMATION}):
   * the marker goes, and must still be there (a concurrent confirmation makes this a lost race).
   */
  confirmAddress(tx: Transaction, teamId: string, projectId: string, subscriberId: string): void {
    tx.update(keys.subscriber(teamId, projectId, subscriberId), {
      expression: `REMOVE ${AWAITING_CONFIRMATION}`,
      condition: `attribute_exists(${AWAITING_CONFIRMATION})`,
    });
  },

  /**
   * Adds to `tx` a subscriber's changed profile (`next`, contact data `contact`; `member_id` too when
   * `memberChanged`), revision + 1, conditional on the revision of `read`; a changed address moves its lookup item.
   */
  writeProfile(
    tx: Transaction,
    teamId: string,
    read: Item,
    next: Subscriber,
    contact: { email: string | null; phone: string | null },
    options: { memberChanged: boolean },
  ): void {
    const set = setFields({
      display_name: next.display_name,
      consent: next.consent,
      provider_customer_id: next.provider_customer_id,
      platform_user_id: next.platform_user_id,
      member_id: options.memberChanged ? next.member_id : undefined,
      email: contact.email,
      phone: contact.phone,
      updated_at: next.updated_at,
      revision: revisionOf(entity.subscriber, read) + 1,
      email_lower: contact.email ? contact.email.toLowerCase() : undefined,
    });
    const guard = existsAtRevisionOf(read);
    tx.update(keys.subscriber(teamId, next.project_id, next.id), {
      expression: `SET ${set.clause}${contact.email ? '' : ' REMOVE email_lower'}`,
      condition: guard.expression,
      names: set.names,
      values: { ...set.values, ...guard.values },
    });
    const before = typeof read.email === 'string' ? read.email : null;
    if (before?.trim().toLowerCase() !== contact.email?.trim().toLowerCase()) {
      if (before) tx.delete(keys.subscriberEmail(teamId, next.project_id, emailSha256(before), next.id));
      if (contact.email) tx.put(emailLookupItem(teamId, next.project_id, next.id, contact.email));
    }
  },

  /**
   * Adds to `tx` a subscriber's moderation fields (`status`, `banned_at`, `member_id`, `updated_at`), revision + 1,
   * conditional on the revision read.
   */
  writeModeration(tx: Transaction, teamId: string, read: Item, next: Subscriber): void {
    const set = setFields({
      status: next.status,
      banned_at: next.banned_at,
      member_id: next.member_id,
      updated_at: next.updated_at,
      revision: revisionOf(entity.subscriber, read) + 1,
    });
    const guard = existsAtRevisionOf(read);
    tx.update(keys.subscriber(teamId, next.project_id, next.id), {
      expression: `SET ${set.clause}`,
      condition: guard.expression,
      names: set.names,
      values: { ...set.values, ...guard.values },
    });
  },

  /**
   * Adds to `tx` the access summary's `status`/`member_id` and subscription-set change (D15, D17). Unconditional
   * (the caller's own write carries the conditions); a transaction touches an item once, so pass both in ONE call.
   */
  writeAccess(
    tx: Transaction,
    teamId: string,
    projectId: string,
    subscriberId: string,
    fields: SubscriberAccessFields,
  ): void {
    const names: Record<string, string> = { '#entity': 'entity' };
    const values: Record<string, unknown> = {
      ':entity': entity.subscriberAccess,
      ':team': teamId,
      ':subscriber': subscriberId,
    };
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
  },

  /**
   * Adds to `tx` taking the claim of `platformUserId` for `subscriberId`, conditional on it being free and its member
   * still `claimMemberId`.
   */
  takeClaim(
    tx: Transaction,
    teamId: string,
    projectId: string,
    platformUserId: string,
    subscriberId: string,
    claimMemberId: string | undefined,
  ): void {
    const member = claimMemberCondition(claimMemberId);
    tx.update(platformUserKey(teamId, projectId, platformUserId), {
      expression: 'SET subscriber_id = :subscriber, #entity = :entity, project_id = :project',
      condition: `attribute_not_exists(subscriber_id) AND ${member.expression}`,
      names: { '#entity': 'entity' },
      values: { ':subscriber': subscriberId, ':entity': entity.platformUser, ':project': projectId, ...member.values },
    });
  },

  /**
   * Adds to `tx` releasing the claim of `platformUserId` held by `subscriberId`, conditional on its member still
   * `claimMemberId`.
   */
  releaseClaim(
    tx: Transaction,
    teamId: string,
    projectId: string,
    platformUserId: string,
    subscriberId: string,
    claimMemberId: string | null,
  ): void {
    const member = claimMemberCondition(claimMemberId);
    tx.update(platformUserKey(teamId, projectId, platformUserId), {
      expression: 'REMOVE subscriber_id',
      condition: `subscriber_id = :subscriber AND ${member.expression}`,
      values: { ':subscriber': subscriberId, ...member.values },
    });
  },

  /**
   * Adds to `tx` naming a new member (revision 0, with its status copy) on the claim `subscriberId` holds, conditional
   * on the claim having no member yet.
   */
  setClaimMember(
    tx: Transaction,
    teamId: string,
    subscriberId: string,
    member: Pick<Member, 'id' | 'project_id' | 'platform_user_id' | 'status' | 'status_changed_at'>,
  ): void {
    const copy = claimStatusCopy(member);
    tx.update(platformUserKey(teamId, member.project_id, member.platform_user_id), {
      expression: `SET member_id = :member, ${copy.clause}`,
      condition: 'subscriber_id = :subscriber AND attribute_not_exists(member_id)',
      values: { ':member': member.id, ':subscriber': subscriberId, ...copy.values },
    });
  },
};
