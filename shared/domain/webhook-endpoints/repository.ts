import type { Principal } from '../../auth/principal.js';
import type { Ability } from '../../catalogues/abilities.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { Runtime } from '../../runtime.js';
import { entity, keys, sortKeyPrefix } from '../../store/keys.js';
import { ConditionFailedError, queryPage, type Item, type Key, type Page, type Store, type TransactionItem } from '../../store/store.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { generateWebhookSecret } from '../webhook-deliveries/signing.js';
import { AUTO_DISABLE_THRESHOLD, DEFAULT_MAX_CONCURRENCY, MAX_ENDPOINTS_PER_TEAM, dualSigningExpiresAtMs, requireEventAbilities } from './policy.js';
import type { CreateWebhookEndpointRequest, ListWebhookEndpointsQuery, UpdateWebhookEndpointRequest, WebhookEndpoint, WebhookEndpointWithSecret } from './schema.js';

/**
 * Persistence and use cases of webhook endpoints (DESIGN D6, D8, D14): endpoint items live in the
 * team's partition (`TEAM#<team>`, `WEBHOOK_ENDPOINT#<uuid>`), over the Store port.
 */

/** The stored endpoint: the public fields plus secrets and the owner's abilities (for D6 fan-out and D10 payloads). */
export type StoredWebhookEndpoint = WebhookEndpoint & {
  team_id: string;
  secret: string;
  /** Kept only during a dashboard rotation's dual-signing window. */
  previous_secret: string | null;
  /** Epoch MILLISECONDS until which `previous_secret` also signs (`v0`). */
  previous_secret_expires_at_ms: number | null;
  /** Token that created the endpoint, and its abilities at that time: the "endpoint owner". */
  owner_token_id: string;
  owner_abilities: Ability[];
  /**
   * The attempts in flight to this endpoint (DESIGN D24): delivery id → epoch MILLISECONDS at which
   * that slot's lease runs out (a crashed attempt's slot is reclaimed after it).
   */
  in_flight: Record<string, number>;
  /**
   * Raised by every write that changes how a delivery is sent (url, secret, allowed IPs, cap, active
   * state), so a dispatcher's cached copy is used only while it is current: its slot is taken on
   * condition of this revision.
   */
  revision: number;
};

/**
 * The `SET` clause that raises {@link StoredWebhookEndpoint.revision} by one, with its values: part of
 * every update that changes how deliveries are sent.
 */
const RAISE_REVISION = { clause: 'revision = revision + :revision_one', values: { ':revision_one': 1 } } as const;

const notFound = (endpointId: string) => new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);

/** Public view of a stored endpoint (never its secrets nor its owner). */
function publicEndpoint(item: StoredWebhookEndpoint): WebhookEndpoint {
  return {
    id: item.id,
    name: item.name,
    url: item.url,
    events: item.events,
    allowed_ips: item.allowed_ips ?? null,
    is_active: item.is_active,
    disabled_at: item.disabled_at ?? null,
    consecutive_failures: item.consecutive_failures ?? 0,
    max_concurrency: item.max_concurrency ?? DEFAULT_MAX_CONCURRENCY,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/**
 * Registers an endpoint (interface "POST /v1/webhook-endpoints", DESIGN D8). The url is HTTPS (checked
 * by the schema), every event is in the catalogue and the creator must hold each event's minimum
 * ability. Returns the endpoint and its secret — the only read that ever shows it.
 * The team item's endpoint counter enforces the cap and the tier's limit (D20) in the endpoint's transaction.
 * Errors: TOKEN_MISSING_ABILITY, CONFLICT (already {@link MAX_ENDPOINTS_PER_TEAM} endpoints), TIER_LIMIT_REACHED.
 */
export async function createWebhookEndpoint(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: Pick<CreateWebhookEndpointRequest, 'name' | 'url' | 'events'> & { allowed_ips?: string[]; max_concurrency?: number },
): Promise<WebhookEndpointWithSecret> {
  const events = [...new Set(input.events)];
  requireEventAbilities(principal, events);
  const now = isoTime(runtime.clock.nowMs());
  const stored: StoredWebhookEndpoint = {
    id: newUuid(),
    team_id: principal.teamId,
    name: input.name,
    url: input.url,
    events,
    allowed_ips: input.allowed_ips ?? null,
    is_active: true,
    disabled_at: null,
    consecutive_failures: 0,
    max_concurrency: input.max_concurrency ?? DEFAULT_MAX_CONCURRENCY,
    created_at: now,
    updated_at: now,
    in_flight: {},
    revision: 1,
    secret: generateWebhookSecret(),
    previous_secret: null,
    previous_secret_expires_at_ms: null,
    owner_token_id: principal.tokenId,
    owner_abilities: [...principal.abilities],
  };
  // D8 and D20: one atomic counter on the team item, in the same transaction as the endpoint, enforces
  // both the 50-endpoint cap and the tier's limit.
  const cap = { max: MAX_ENDPOINTS_PER_TEAM, problem: () => new ProblemError('CONFLICT', `The team has ${MAX_ENDPOINTS_PER_TEAM} webhook endpoints, the most it can have; delete one first.`) };
  return withinTierLimit(runtime, principal.teamId, 'webhook_endpoints', () =>
    unitOfWork(runtime, principal.teamId, (tx) => {
      countUsage(tx, principal.teamId, 'webhook_endpoints', 1, { cap: MAX_ENDPOINTS_PER_TEAM });
      tx.put({ ...keys.webhookEndpoint(principal.teamId, stored.id), entity: entity.webhookEndpoint, ...stored }, { condition: 'attribute_not_exists(pk)' });
      return { ...publicEndpoint(stored), secret: stored.secret };
    }),
    cap,
  );
}

/** Reads the stored endpoint (with secrets, for the dispatcher) or null. Strongly consistent. */
export async function loadWebhookEndpoint(runtime: Pick<Runtime, 'store'>, teamId: string, endpointId: string): Promise<StoredWebhookEndpoint | null> {
  return ((await runtime.store.get(keys.webhookEndpoint(teamId, endpointId), { consistent: true })) as StoredWebhookEndpoint | undefined) ?? null;
}

/** Reads one endpoint of the principal's team (never its secret). Errors: NOT_FOUND when absent or foreign. */
export async function getWebhookEndpoint(runtime: Pick<Runtime, 'store'>, principal: Principal, endpointId: string): Promise<WebhookEndpoint> {
  const item = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!item) throw notFound(endpointId);
  return publicEndpoint(item);
}

/**
 * One strongly consistent page of the team's stored endpoints (with secrets), in id order, optionally
 * only active or disabled ones (a filtered page may hold fewer than `limit`). Errors: VALIDATION_FAILED
 * for a cursor of another list.
 */
async function queryEndpoints(runtime: Pick<Runtime, 'store'>, teamId: string, page: { limit: number; cursor?: string; is_active?: boolean }): Promise<Page<StoredWebhookEndpoint>> {
  return queryPage(runtime.store, {
    partition: keys.teamPartition(teamId),
    sortKeyPrefix: sortKeyPrefix.webhookEndpoint,
    limit: page.limit,
    cursor: page.cursor,
    consistent: true,
    map: (item: Item) => item as StoredWebhookEndpoint,
    filter: page.is_active === undefined ? undefined : { expression: 'is_active = :is_active', values: { ':is_active': page.is_active } },
  });
}

/** Every stored endpoint of a team, with secrets (at most {@link MAX_ENDPOINTS_PER_TEAM}); used by fan-out. */
export async function allWebhookEndpoints(runtime: Pick<Runtime, 'store'>, teamId: string): Promise<StoredWebhookEndpoint[]> {
  return (await queryEndpoints(runtime, teamId, { limit: MAX_ENDPOINTS_PER_TEAM })).data;
}

/**
 * Lists the team's endpoints (never secrets), paged (DESIGN D12); with `is_active`, only active (true)
 * or disabled (false) ones — applied by DynamoDB, so a page may be short while `next_cursor` is set.
 * Errors: VALIDATION_FAILED for a cursor of another list.
 */
export async function listWebhookEndpoints(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  query: Pick<ListWebhookEndpointsQuery, 'limit' | 'cursor' | 'is_active'>,
): Promise<Page<WebhookEndpoint>> {
  const result = await queryEndpoints(runtime, principal.teamId, query);
  return { data: result.data.map(publicEndpoint), next_cursor: result.next_cursor };
}

/**
 * Updates an endpoint (`POST /v1/webhook-endpoints/{id}`). `is_active: true` on a disabled endpoint
 * re-enables it and resets `consecutive_failures` and `disabled_at` (interface "States": inactive → active);
 * `is_active: false` disables it by hand (`disabled_at` keeps the first time).
 * Errors: NOT_FOUND, TOKEN_MISSING_ABILITY (an event whose minimum ability the caller lacks).
 */
export async function updateWebhookEndpoint(
  runtime: Pick<Runtime, 'store' | 'clock'>,
  principal: Principal,
  endpointId: string,
  input: UpdateWebhookEndpointRequest,
): Promise<WebhookEndpoint> {
  // D6: whoever changes where events go (url) or which (events) becomes the owner, and must hold the
  // minimum ability of every event the endpoint then subscribes.
  const repoints = input.url !== undefined || input.events !== undefined;
  if (repoints) {
    const events = input.events ?? (await loadWebhookEndpoint(runtime, principal.teamId, endpointId))?.events;
    if (!events) throw notFound(endpointId);
    requireEventAbilities(principal, events);
  }
  const now = isoTime(runtime.clock.nowMs());
  const sets = ['updated_at = :now', RAISE_REVISION.clause];
  const values: Record<string, unknown> = { ':now': now, ...RAISE_REVISION.values };
  const names: Record<string, string> = {};
  const assign = (field: string, value: unknown) => {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  };
  if (input.name !== undefined) assign('name', input.name);
  if (input.url !== undefined) assign('url', input.url);
  if (input.events !== undefined) assign('events', [...new Set(input.events)]);
  if (input.allowed_ips !== undefined) assign('allowed_ips', input.allowed_ips);
  if (input.max_concurrency !== undefined) assign('max_concurrency', input.max_concurrency);
  if (repoints) {
    assign('owner_token_id', principal.tokenId);
    assign('owner_abilities', [...principal.abilities]);
  }
  if (input.is_active === true) {
    assign('is_active', true);
    assign('consecutive_failures', 0);
    assign('disabled_at', null);
  } else if (input.is_active === false) {
    assign('is_active', false);
  }
  // `disabled_at` is stored as NULL while active, so `if_not_exists` cannot tell "never disabled":
  // disabling an active endpoint sets it (guarded on `is_active = true`); disabling one that is already
  // inactive keeps the first time (the second, unguarded update).
  const update = (setDisabledAt: boolean) =>
    runtime.store.update({
      Key: keys.webhookEndpoint(principal.teamId, endpointId),
      UpdateExpression: `SET ${[...sets, ...(setDisabledAt ? ['disabled_at = :now'] : [])].join(', ')}`,
      ConditionExpression: setDisabledAt ? 'attribute_exists(pk) AND #is_active = :was_active' : 'attribute_exists(pk)',
      ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
      ExpressionAttributeValues: setDisabledAt ? { ...values, ':was_active': true } : values,
      ReturnValues: 'ALL_NEW',
    });
  try {
    let attributes: Item | undefined;
    try {
      attributes = await update(input.is_active === false);
    } catch (error) {
      if (!(input.is_active === false && error instanceof ConditionFailedError)) throw error;
      attributes = await update(false);
    }
    return publicEndpoint(attributes as StoredWebhookEndpoint);
  } catch (error) {
    if (error instanceof ConditionFailedError) throw notFound(endpointId);
    throw error;
  }
}

/** Deletes an endpoint; its pending deliveries stop at their next attempt. Errors: NOT_FOUND when absent. */
export async function deleteWebhookEndpoint(runtime: UnitOfWorkRuntime, principal: Principal, endpointId: string): Promise<{ id: string; deleted: true }> {
  return unitOfWork(runtime, principal.teamId, (tx) => {
    tx.delete(keys.webhookEndpoint(principal.teamId, endpointId), { condition: 'attribute_exists(pk)', onConditionFailed: () => notFound(endpointId) });
    countUsage(tx, principal.teamId, 'webhook_endpoints', -1);
    return { id: endpointId, deleted: true as const };
  });
}

/**
 * Rotates the signing secret (DESIGN D8). `mode: 'api'` replaces it at once (deliveries carry `v1`
 * only); `mode: 'dashboard'` keeps the old secret for 24 hours (divided by the local TIME_SCALE), during
 * which deliveries carry `v1` (new) and `v0` (old). Returns the endpoint with the new secret, shown once.
 * Errors: NOT_FOUND, CONFLICT (rotated concurrently).
 */
export async function rotateWebhookEndpointSecret(
  runtime: Pick<Runtime, 'store' | 'clock' | 'timeScale'>,
  principal: Principal,
  endpointId: string,
  mode: 'api' | 'dashboard' = 'api',
): Promise<WebhookEndpointWithSecret> {
  const current = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!current) throw notFound(endpointId);
  const nowMs = runtime.clock.nowMs();
  const secret = generateWebhookSecret();
  const previousSecret = mode === 'dashboard' ? current.secret : null;
  const previousExpiresAt = mode === 'dashboard' ? dualSigningExpiresAtMs(nowMs, runtime.timeScale) : null;
  try {
    const attributes = await runtime.store.update({
      Key: keys.webhookEndpoint(principal.teamId, endpointId),
      UpdateExpression: `SET secret = :secret, previous_secret = :previous, previous_secret_expires_at_ms = :expires, updated_at = :now, ${RAISE_REVISION.clause}`,
      // Only rotate the secret we read, so two concurrent rotations cannot both keep a stale "previous".
      ConditionExpression: 'secret = :current',
      ExpressionAttributeValues: { ':secret': secret, ':previous': previousSecret, ':expires': previousExpiresAt, ':now': isoTime(nowMs), ':current': current.secret, ...RAISE_REVISION.values },
      ReturnValues: 'ALL_NEW',
    });
    return { ...publicEndpoint(attributes as StoredWebhookEndpoint), secret };
  } catch (error) {
    if (error instanceof ConditionFailedError) throw new ProblemError('CONFLICT', 'The secret was rotated concurrently; retry.');
    throw error;
  }
}

/**
 * The endpoint update that ends a successful attempt (DESIGN D8, D24), for the dispatcher's outcome
 * transaction: gives back the delivery's slot and resets `consecutive_failures` to 0, on condition that
 * the endpoint still exists (a condition failure means it was deleted meanwhile).
 */
export function successfulAttemptUpdate(teamId: string, endpointId: string, deliveryId: string): TransactionItem {
  return {
    Update: {
      Key: keys.webhookEndpoint(teamId, endpointId),
      UpdateExpression: 'SET consecutive_failures = :zero REMOVE in_flight.#delivery',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#delivery': deliveryId },
      ExpressionAttributeValues: { ':zero': 0 },
    },
  };
}

/**
 * Counts one failed attempt on its endpoint and gives back the delivery's slot, in one update
 * (interface "States", DESIGN D8, D24); the failure that reaches {@link AUTO_DISABLE_THRESHOLD} disables
 * the endpoint (`is_active=false`, `disabled_at`). A deleted endpoint or a lost race is ignored.
 * Throws only on store errors.
 */
export async function recordFailedAttempt(runtime: Pick<Runtime, 'store' | 'clock'>, teamId: string, endpointId: string, deliveryId: string): Promise<void> {
  const Key = keys.webhookEndpoint(teamId, endpointId);
  try {
    const attributes = await runtime.store.update({
      Key,
      UpdateExpression: 'ADD consecutive_failures :one REMOVE in_flight.#delivery',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeNames: { '#delivery': deliveryId },
      ExpressionAttributeValues: { ':one': 1 },
      ReturnValues: 'UPDATED_NEW',
    });
    if (Number(attributes?.consecutive_failures) >= AUTO_DISABLE_THRESHOLD) {
      const now = isoTime(runtime.clock.nowMs());
      await runtime.store.update({
        Key,
        UpdateExpression: `SET is_active = :false, disabled_at = :now, updated_at = :now, ${RAISE_REVISION.clause}`,
        ConditionExpression: 'is_active = :true AND consecutive_failures >= :threshold',
        ExpressionAttributeValues: { ':false': false, ':true': true, ':now': now, ':threshold': AUTO_DISABLE_THRESHOLD, ...RAISE_REVISION.values },
      });
    }
  } catch (error) {
    ignoreCondition(error);
  }
}

/** What {@link acquireDeliverySlot} found: a slot (with the endpoint as stored), a full cap, or no active endpoint. */
export type SlotAcquisition = { kind: 'acquired'; endpoint: StoredWebhookEndpoint } | { kind: 'full' } | { kind: 'stopped' };

/**
 * Takes one of the endpoint's concurrency slots for delivery `deliveryId` until `leaseUntilMs` (epoch
 * MILLISECONDS) with one conditional UpdateItem that also returns the endpoint (DESIGN D24, D14: the
 * slot and the endpoint read are one request). The endpoint must exist and be active, and hold fewer
 * than `max_concurrency` slots (or already hold this delivery's). When the cap is full, slots whose
 * lease ran out (their attempt crashed) are removed and the slot is tried once more.
 * Returns `acquired`, `full` or `stopped` (deleted or disabled). Throws only on store errors.
 */
export async function acquireDeliverySlot(store: Store, teamId: string, endpointId: string, deliveryId: string, leaseUntilMs: number, nowMs: number): Promise<SlotAcquisition> {
  const Key = keys.webhookEndpoint(teamId, endpointId);
  const attempt = async () =>
    (await store.update({
      Key,
      UpdateExpression: 'SET in_flight.#delivery = :lease',
      ConditionExpression: `attribute_exists(pk) AND is_active = :true AND ${SLOT_ROOM_CONDITION}`,
      ExpressionAttributeNames: { '#delivery': deliveryId },
      ExpressionAttributeValues: { ':lease': leaseUntilMs, ':true': true },
      ReturnValues: 'ALL_NEW',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    })) as StoredWebhookEndpoint;
  for (let round = 0; ; round++) {
    try {
      const endpoint = await attempt();
      rememberWebhookEndpoint(store, endpoint);
      return { kind: 'acquired', endpoint };
    } catch (error) {
      if (error instanceof ConditionFailedError) {
        const current = error.item as StoredWebhookEndpoint | undefined;
        if (!current || !current.is_active) return { kind: 'stopped' };
        const expired = Object.entries(current.in_flight).filter(([, until]) => until < nowMs);
        if (round > 0 || expired.length === 0) return { kind: 'full' };
        await reclaimSlots(store, Key, expired);
        continue;
      }
      throw error;
    }
  }
}

/** A slot is free for delivery `#delivery`: it holds one already, or fewer than the cap are taken (D24). */
const SLOT_ROOM_CONDITION = '(attribute_exists(in_flight.#delivery) OR size(in_flight) < max_concurrency)';

/**
 * {@link acquireDeliverySlot}'s slot as a transaction item, for the dispatcher's one transaction that
 * takes the delivery's lease and the slot: from `endpoint`, a copy the dispatcher
 * keeps ({@link cachedWebhookEndpoint}), on condition that the endpoint is active, still at that copy's
 * {@link StoredWebhookEndpoint.revision} (so the url and secret the dispatcher signs and sends with are
 * current) and has room. A refused condition returns the endpoint as found (read it with
 * {@link slotRefusal}).
 */
export function deliverySlotItem(endpoint: StoredWebhookEndpoint, deliveryId: string, leaseUntilMs: number): TransactionItem {
  return {
    Update: {
      Key: keys.webhookEndpoint(endpoint.team_id, endpoint.id),
      UpdateExpression: 'SET in_flight.#delivery = :lease',
      ConditionExpression: `attribute_exists(pk) AND is_active = :true AND revision = :revision AND ${SLOT_ROOM_CONDITION}`,
      ExpressionAttributeNames: { '#delivery': deliveryId },
      ExpressionAttributeValues: { ':lease': leaseUntilMs, ':true': true, ':revision': endpoint.revision },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    },
  };
}

/**
 * Why {@link deliverySlotItem} was refused, from the endpoint as found (`undefined`: deleted) and the
 * copy it was built from: `stopped` (deleted or disabled), `stale` (the copy is of another revision:
 * build the item again from the endpoint as found), `reclaim` (full, but
 * holding slots whose lease ran out before `nowMs`, epoch ms: take the slot the long way, which
 * reclaims them) or `full`.
 */
export function slotRefusal(found: Item | undefined, used: StoredWebhookEndpoint, nowMs: number): 'stopped' | 'stale' | 'reclaim' | 'full' {
  const endpoint = found as StoredWebhookEndpoint | undefined;
  if (!endpoint || !endpoint.is_active) return 'stopped';
  if (endpoint.revision !== used.revision) return 'stale';
  return Object.values(endpoint.in_flight).some((until) => until < nowMs) ? 'reclaim' : 'full';
}

/** The most endpoints a process keeps copies of ({@link cachedWebhookEndpoint}); the oldest copy goes first. */
const ENDPOINT_CACHE_SIZE = 1_000;

/** Endpoint copies by table, team and endpoint (tests on separate tables never share copies), oldest first. */
const endpointCopies = new Map<string, StoredWebhookEndpoint>();

const copyKey = (store: Store, teamId: string, endpointId: string) => `${store.tableName}/${teamId}/${endpointId}`;

/**
 * The dispatcher's copy of an endpoint: the last one read through this process
 * ({@link acquireDeliverySlot} or {@link rememberWebhookEndpoint}), else one strongly consistent GetItem;
 * null when the endpoint does not exist. A copy may be stale: it is used only with
 * {@link deliverySlotItem}, whose condition on the revision refuses a stale one.
 */
export async function cachedWebhookEndpoint(store: Store, teamId: string, endpointId: string): Promise<StoredWebhookEndpoint | null> {
  const copy = endpointCopies.get(copyKey(store, teamId, endpointId));
  if (copy) return copy;
  const endpoint = await loadWebhookEndpoint({ store }, teamId, endpointId);
  if (endpoint) rememberWebhookEndpoint(store, endpoint);
  return endpoint;
}

/** Keeps `endpoint` (as just read from `store`) as the process's copy for {@link cachedWebhookEndpoint}, dropping the oldest beyond {@link ENDPOINT_CACHE_SIZE}. */
export function rememberWebhookEndpoint(store: Store, endpoint: StoredWebhookEndpoint): void {
  const key = copyKey(store, endpoint.team_id, endpoint.id);
  endpointCopies.delete(key);
  endpointCopies.set(key, endpoint);
  if (endpointCopies.size > ENDPOINT_CACHE_SIZE) endpointCopies.delete(endpointCopies.keys().next().value!);
}

/** Removes slots whose lease ran out, each on condition that it still holds the lease that was read. */
async function reclaimSlots(store: Store, Key: Key, expired: ReadonlyArray<readonly [string, number]>): Promise<void> {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const conditions: string[] = [];
  expired.forEach(([deliveryId, until], index) => {
    names[`#d${index}`] = deliveryId;
    values[`:u${index}`] = until;
    conditions.push(`in_flight.#d${index} = :u${index}`);
  });
  await store
    .update({ Key, UpdateExpression: `REMOVE ${expired.map((_, index) => `in_flight.#d${index}`).join(', ')}`, ConditionExpression: conditions.join(' AND '), ExpressionAttributeNames: names, ExpressionAttributeValues: values })
    .catch(ignoreCondition);
}

/** Gives back a slot taken by {@link acquireDeliverySlot} without counting an outcome (the attempt was not made). */
export async function releaseDeliverySlot(store: Store, teamId: string, endpointId: string, deliveryId: string): Promise<void> {
  await store
    .update({ Key: keys.webhookEndpoint(teamId, endpointId), UpdateExpression: 'REMOVE in_flight.#delivery', ConditionExpression: 'attribute_exists(pk)', ExpressionAttributeNames: { '#delivery': deliveryId } })
    .catch(ignoreCondition);
}

function ignoreCondition(error: unknown): void {
  if (!(error instanceof ConditionFailedError)) throw error;
}
