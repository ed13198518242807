import type { Principal } from '../../auth/principal.js';
import { canAccessSubscriberData, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Store } from '../../store/store.js';
import type { Item } from '../../store/requests.js';
import { projectStore } from '../../store/projects.js';
import {
  AWAITING_CONFIRMATION,
  subscriberStore,
  type SubscriberAccessFields,
  type SubscriberAccessSetChange,
} from '../../store/subscribers.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { toMember, writeMemberChange } from '../members/repository.js';
import type { Member } from '../members/schema.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { memberUpdated, readLinkTarget } from './member-link.js';
import { parseStoredSubscriber, type StoredSubscriberRecord } from './record.js';
import type { CreateSubscriberRequest, Subscriber } from './schema.js';

/**
 * Subscriber reads, access summary and creation (D10, D14, D17); lists.ts, changes.ts (pure decisions.ts),
 * member-link.ts hold the rest. Found by id through `keys.subscriberRef`; a `platform_user_id` holds that user's claim,
 * linking the member in the same transaction. `email`/`phone` are always stored (shown per D10); one live-subscription
 * counter per plan ({@link livePlanAttribute}). No `subscriber.*` events: changes emit `member.updated`.
 */

export { livePlanAttribute } from './record.js';
export type { SubscriberAccessFields, SubscriberAccessSetChange };

/**
 * The stored subscriber item as read: the public fields plus `revision` (optimistic concurrency, read through
 * `revisionOf`) and `email_lower` (prefix search).
 */
export type StoredSubscriber = Item;

/** NOT_FOUND for a subscriber id (absent, foreign or out of scope: the same answer). */
export const subscriberNotFound = (subscriberId: string) =>
  new ProblemError('NOT_FOUND', `No subscriber ${subscriberId}.`);

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
export async function loadSubscriber(
  store: Store,
  principal: Principal,
  subscriberId: string,
): Promise<StoredSubscriber> {
  const projectId = await subscriberStore.projectOf(store, principal.teamId, subscriberId);
  if (!projectId || !canAccessSubscriberData(principal, projectId, subscriberId))
    throw subscriberNotFound(subscriberId);
  const item = await subscriberStore.read(store, principal.teamId, projectId, subscriberId);
  if (!item) throw subscriberNotFound(subscriberId);
  return item;
}

/**
 * Reads a subscriber of the principal's team, consented contact data included (D10: the caller decides who may see it).
 * 2 GetItems. Errors: NOT_FOUND when absent, of another team, or outside the token's project scope.
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

/** True when `change` adds or deletes nothing. */
export function isEmptySetChange(change: SubscriberAccessSetChange): boolean {
  return (
    change.add.granting.length + change.add.paid.length + change.delete.granting.length + change.delete.paid.length ===
    0
  );
}

/**
 * Adds to `tx` the access summary's `status`/`member_id` and subscription-set change; call it on every write of those
 * fields or of access (D15, D17). Unconditional (the own write carries the conditions); a transaction touches an item
 * once, so pass both changes in ONE call.
 */
export function writeSubscriberAccess(
  tx: Transaction,
  teamId: string,
  projectId: string,
  subscriberId: string,
  fields: SubscriberAccessFields,
): void {
  subscriberStore.writeAccess(tx, teamId, projectId, subscriberId, fields);
}

/** The stored subscriber item of a new subscriber (revision 0); `email`/`phone` stored whatever the consent. */
export function newSubscriberItem(
  teamId: string,
  subscriber: Subscriber,
  contact: { email: string | null; phone: string | null },
): Item {
  return subscriberStore.newItem(teamId, subscriber, contact);
}

/** The project item of the principal's team (strongly consistent) after the scope check; NOT_FOUND otherwise. */
async function requireProject(store: Store, principal: Principal, projectId: string): Promise<Item> {
  requireProjectAccess(principal, projectId);
  const project = await projectStore.read(store, principal.teamId, projectId);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return project;
}

/** Adds to `tx` a check that the project still exists (NOT_FOUND otherwise). */
function checkProject(tx: Transaction, teamId: string, projectId: string): void {
  projectStore.checkExists(tx, teamId, projectId, () => new ProblemError('NOT_FOUND', `No project ${projectId}.`));
}

/** A new subscriber ready to be written: what it will read as, and the writes that create it. */
export interface PreparedSubscriber {
  /** The subscriber as it will exist (consented contact data included). */
  subscriber: Subscriber;
  /**
   * Adds the creation to `tx` (subscriber, reference, claim, member link + `member.updated`), conditional on the claim
   * unchanged (lost race) and the project existing (NOT_FOUND) unless `projectGuarded` (the caller's project write
   * guards it); `accessSets` tracks a subscription created alongside.
   */
  write(
    tx: Transaction,
    options?: { attributes?: Item; projectGuarded?: boolean; accessSets?: SubscriberAccessSetChange },
  ): void;
}

/**
 * Prepares a subscriber creation without writing (D17, D18); the caller checks the project and commits {@link
 * PreparedSubscriber.write}. Reuse `subscriberId` when retrying a lost race. `awaitingConfirmation` (a free join, D26):
 * not counted against the tier until its address is confirmed. Errors: CONFLICT when another subscriber of the project
 * has the platform user id.
 */
export async function prepareSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: CreateSubscriberRequest,
  subscriberId: string = newUuid(),
  options: { awaitingConfirmation?: boolean } = {},
): Promise<PreparedSubscriber> {
  const teamId = principal.teamId;
  const platformUserId = input.platform_user_id ?? null;
  const link = platformUserId
    ? await readLinkTarget(runtime.store, teamId, projectId, platformUserId, subscriberId)
    : { member: undefined, claimMemberId: undefined };
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
    write: (tx, write = {}) => {
      if (!write.projectGuarded) checkProject(tx, teamId, projectId);
      if (!options.awaitingConfirmation) countUsage(tx, teamId, 'subscribers', 1);
      const attributes = options.awaitingConfirmation
        ? { ...write.attributes, [AWAITING_CONFIRMATION]: true }
        : write.attributes;
      subscriberStore.create(tx, teamId, item, stored, attributes);
      writeSubscriberAccess(tx, teamId, projectId, subscriberId, {
        status: stored.status,
        member_id: stored.member_id,
        sets: write.accessSets,
      });
      if (platformUserId)
        subscriberStore.takeClaim(tx, teamId, projectId, platformUserId, subscriberId, link.claimMemberId);
      if (link.member) {
        const member: Member = { ...toMember(link.member), subscriber_id: subscriberId, updated_at: nowIso };
        writeMemberChange(tx, teamId, link.member, member);
        tx.emit(memberUpdated(member, subscriber));
      }
    },
  };
}

/**
 * Creates a subscriber (D17), claiming `platform_user_id` and linking its member; counts against the tier (D20).
 * Returns consented contact data. Errors: NOT_FOUND (project absent, foreign, out of scope); TIER_LIMIT_REACHED;
 * CONFLICT (platform user id taken, `MAX_ATTEMPTS` lost races).
 */
export async function createSubscriber(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  input: CreateSubscriberRequest,
): Promise<Subscriber> {
  await requireProject(runtime.store, principal, projectId);
  const subscriberId = newUuid();
  return retryOnLostRace(
    async () => {
      const prepared = await prepareSubscriber(runtime, principal, projectId, input, subscriberId);
      // D20: the team's subscriber counter rises in the same transaction (in `write`), within the tier's limit.
      await withinTierLimit(runtime, principal.teamId, 'subscribers', () =>
        unitOfWork(runtime, principal.teamId, (tx) => prepared.write(tx)),
      );
      return prepared.subscriber;
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `The platform user ${input.platform_user_id ?? ''} kept changing while this request ran; retry.`,
        ),
    },
  );
}
