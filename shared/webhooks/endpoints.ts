import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { webhookEvent, type WebhookEventName } from '../catalogues/webhook-events.js';
import type { Ability } from '../catalogues/abilities.js';
import type { Principal } from '../auth/tokens.js';
import { isoTime } from '../clock.js';
import { ProblemError } from '../errors.js';
import { newUuid } from '../ids.js';
import type { Runtime } from '../runtime.js';
import { keys, sortKeyPrefix } from '../store/keys.js';
import { decodeCursor, encodeCursor } from '../store/store.js';
import { generateWebhookSecret } from './signing.js';

/** A team may register at most this many endpoints (so one fan-out fits one DynamoDB transaction). */
export const MAX_ENDPOINTS_PER_TEAM = 50;
/** Dashboard rotation keeps the previous secret this long (seconds; interface "Limits": dual-sign window). */
export const DUAL_SIGNING_WINDOW_SECONDS = 24 * 60 * 60;
/** Consecutive failed attempts that disable an endpoint (interface "Limits"). */
export const AUTO_DISABLE_THRESHOLD = 20;

/** A webhook endpoint as reads return it: never with a secret (interface "Webhook endpoint", DESIGN D8). */
export interface WebhookEndpoint {
  id: string;
  name: string;
  url: string;
  events: WebhookEventName[];
  allowed_ips: string[] | null;
  is_active: boolean;
  disabled_at: string | null;
  consecutive_failures: number;
  created_at: string;
  updated_at: string;
}

/** The stored endpoint: the public fields plus secrets and the owner's abilities (for D6 fan-out and D10 payloads). */
export interface StoredWebhookEndpoint extends WebhookEndpoint {
  team_id: string;
  secret: string;
  /** Kept only during a dashboard rotation's dual-signing window. */
  previous_secret: string | null;
  /** Epoch milliseconds until which `previous_secret` also signs (v0). */
  previous_secret_expires_at_ms: number | null;
  /** Token that created the endpoint, and its abilities at that time: the "endpoint owner". */
  owner_token_id: string;
  owner_abilities: Ability[];
}

/** Public view of a stored endpoint. */
export function publicEndpoint(item: StoredWebhookEndpoint): WebhookEndpoint {
  return {
    id: item.id,
    name: item.name,
    url: item.url,
    events: item.events,
    allowed_ips: item.allowed_ips ?? null,
    is_active: item.is_active,
    disabled_at: item.disabled_at ?? null,
    consecutive_failures: item.consecutive_failures ?? 0,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/** Throws TOKEN_MISSING_ABILITY when the principal lacks an event's minimum ability (interface "Subscribing"). */
function requireEventAbilities(principal: Principal, events: readonly WebhookEventName[]): void {
  const missing = events.filter((name) => !principal.abilities.has(webhookEvent(name).minimum_ability));
  if (missing.length) {
    const detail = missing.map((name) => `${name} needs ${webhookEvent(name).minimum_ability}`).join('; ');
    throw new ProblemError('TOKEN_MISSING_ABILITY', `Subscribing to these events needs abilities this token lacks: ${detail}.`);
  }
}

/**
 * Registers an endpoint (interface "POST /v1/webhook-endpoints", DESIGN D8). The url is HTTPS (checked
 * at the edge), every event must be in the catalogue and the creator must hold each event's minimum
 * ability. Returns the endpoint and its secret — the only read that ever shows it.
 * Errors: TOKEN_MISSING_ABILITY, CONFLICT (more than {@link MAX_ENDPOINTS_PER_TEAM}).
 */
export async function createWebhookEndpoint(
  runtime: Runtime,
  principal: Principal,
  input: { name: string; url: string; events: WebhookEventName[]; allowed_ips?: string[] },
): Promise<WebhookEndpoint & { secret: string }> {
  const events = [...new Set(input.events)];
  requireEventAbilities(principal, events);
  const existing = await queryEndpoints(runtime, principal.teamId, { limit: MAX_ENDPOINTS_PER_TEAM });
  if (existing.data.length >= MAX_ENDPOINTS_PER_TEAM) {
    throw new ProblemError('CONFLICT', `A team can have at most ${MAX_ENDPOINTS_PER_TEAM} webhook endpoints; delete one first.`);
  }
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
    created_at: now,
    updated_at: now,
    secret: generateWebhookSecret(),
    previous_secret: null,
    previous_secret_expires_at_ms: null,
    owner_token_id: principal.tokenId,
    owner_abilities: [...principal.abilities],
  };
  await runtime.store.document.send(
    new PutCommand({
      TableName: runtime.store.tableName,
      Item: { ...keys.webhookEndpoint(principal.teamId, stored.id), entity: 'webhook_endpoint', ...stored },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
  return { ...publicEndpoint(stored), secret: stored.secret };
}

/** Reads the stored endpoint (with secrets, for the dispatcher) or null. Strongly consistent. */
export async function loadWebhookEndpoint(runtime: Runtime, teamId: string, endpointId: string): Promise<StoredWebhookEndpoint | null> {
  const result = await runtime.store.document.send(
    new GetCommand({ TableName: runtime.store.tableName, Key: keys.webhookEndpoint(teamId, endpointId), ConsistentRead: true }),
  );
  return (result.Item as StoredWebhookEndpoint | undefined) ?? null;
}

/** Reads one endpoint of the principal's team; NOT_FOUND when absent or foreign. */
export async function getWebhookEndpoint(runtime: Runtime, principal: Principal, endpointId: string): Promise<WebhookEndpoint> {
  const item = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!item) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
  return publicEndpoint(item);
}

async function queryEndpoints(runtime: Runtime, teamId: string, page: { limit: number; cursor?: string }) {
  const partition = keys.teamPartition(teamId);
  const result = await runtime.store.document.send(
    new QueryCommand({
      TableName: runtime.store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.webhookEndpoint },
      Limit: page.limit,
      ExclusiveStartKey: decodeCursor(page.cursor, partition, { sortKeyPrefix: sortKeyPrefix.webhookEndpoint }),
      ConsistentRead: true,
    }),
  );
  return { data: (result.Items ?? []) as StoredWebhookEndpoint[], next_cursor: encodeCursor(result.LastEvaluatedKey) };
}

/** Every stored endpoint of a team (at most {@link MAX_ENDPOINTS_PER_TEAM}); used by fan-out. */
export async function allWebhookEndpoints(runtime: Runtime, teamId: string): Promise<StoredWebhookEndpoint[]> {
  return (await queryEndpoints(runtime, teamId, { limit: MAX_ENDPOINTS_PER_TEAM })).data;
}

/** Lists the team's endpoints (never secrets), paged (DESIGN D12). */
export async function listWebhookEndpoints(runtime: Runtime, principal: Principal, page: { limit: number; cursor?: string }): Promise<{ data: WebhookEndpoint[]; next_cursor: string | null }> {
  const result = await queryEndpoints(runtime, principal.teamId, page);
  return { data: result.data.map(publicEndpoint), next_cursor: result.next_cursor };
}

/**
 * Updates an endpoint (`POST /v1/webhook-endpoints/{id}`). `is_active: true` on a disabled endpoint
 * re-enables it and resets `consecutive_failures` and `disabled_at` (interface "States": inactive → active);
 * `is_active: false` disables it by hand. Errors: NOT_FOUND, TOKEN_MISSING_ABILITY (new events).
 */
export async function updateWebhookEndpoint(
  runtime: Runtime,
  principal: Principal,
  endpointId: string,
  input: { name?: string; url?: string; events?: WebhookEventName[]; allowed_ips?: string[] | null; is_active?: boolean },
): Promise<WebhookEndpoint> {
  if (input.events) requireEventAbilities(principal, input.events);
  const now = isoTime(runtime.clock.nowMs());
  const sets = ['updated_at = :now'];
  const values: Record<string, unknown> = { ':now': now };
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
    runtime.store.document.send(
      new UpdateCommand({
        TableName: runtime.store.tableName,
        Key: keys.webhookEndpoint(principal.teamId, endpointId),
        UpdateExpression: `SET ${[...sets, ...(setDisabledAt ? ['disabled_at = :now'] : [])].join(', ')}`,
        ConditionExpression: setDisabledAt ? 'attribute_exists(pk) AND #is_active = :was_active' : 'attribute_exists(pk)',
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: setDisabledAt ? { ...values, ':was_active': true } : values,
        ReturnValues: 'ALL_NEW',
      }),
    );
  try {
    let result;
    try {
      result = await update(input.is_active === false);
    } catch (error) {
      if (!(input.is_active === false && error instanceof ConditionalCheckFailedException)) throw error;
      result = await update(false);
    }
    return publicEndpoint(result.Attributes as StoredWebhookEndpoint);
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
    throw error;
  }
}

/** Deletes an endpoint; its pending deliveries stop at their next attempt. NOT_FOUND when absent. */
export async function deleteWebhookEndpoint(runtime: Runtime, principal: Principal, endpointId: string): Promise<{ id: string; deleted: true }> {
  try {
    await runtime.store.document.send(
      new DeleteCommand({ TableName: runtime.store.tableName, Key: keys.webhookEndpoint(principal.teamId, endpointId), ConditionExpression: 'attribute_exists(pk)' }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
    throw error;
  }
  return { id: endpointId, deleted: true };
}

/**
 * Rotates the signing secret (DESIGN D8). `mode: 'api'` replaces it at once (deliveries carry `v1`
 * only); `mode: 'dashboard'` keeps the old secret for 24 hours (divided by the local TIME_SCALE), during
 * which deliveries carry `v1` (new) and `v0` (old). Returns the endpoint with the new secret, shown once.
 */
export async function rotateWebhookEndpointSecret(
  runtime: Runtime,
  principal: Principal,
  endpointId: string,
  mode: 'api' | 'dashboard' = 'api',
): Promise<WebhookEndpoint & { secret: string }> {
  const current = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!current) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
  const nowMs = runtime.clock.nowMs();
  const secret = generateWebhookSecret();
  const previousSecret = mode === 'dashboard' ? current.secret : null;
  const previousExpiresAt = mode === 'dashboard' ? nowMs + (DUAL_SIGNING_WINDOW_SECONDS * 1000) / runtime.timeScale : null;
  try {
    const result = await runtime.store.document.send(
      new UpdateCommand({
        TableName: runtime.store.tableName,
        Key: keys.webhookEndpoint(principal.teamId, endpointId),
        UpdateExpression: 'SET secret = :secret, previous_secret = :previous, previous_secret_expires_at_ms = :expires, updated_at = :now',
        // Only rotate the secret we read, so two concurrent rotations cannot both keep a stale "previous".
        ConditionExpression: 'secret = :current',
        ExpressionAttributeValues: { ':secret': secret, ':previous': previousSecret, ':expires': previousExpiresAt, ':now': isoTime(nowMs), ':current': current.secret },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return { ...publicEndpoint(result.Attributes as StoredWebhookEndpoint), secret };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw new ProblemError('CONFLICT', 'The secret was rotated concurrently; retry.');
    throw error;
  }
}
