import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import type { Runtime } from '../../runtime.js';
import { webhookEndpointStore, type EndpointFields } from '../../store/webhook-endpoints/endpoints.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { generateWebhookSecret } from '../webhook-deliveries/signing.js';
import {
  DEFAULT_MAX_CONCURRENCY,
  MAX_ENDPOINTS_PER_TEAM,
  dualSigningExpiresAtMs,
  requireEventAbilities,
} from './policy.js';
import type { StoredWebhookEndpoint } from './record.js';
import { loadWebhookEndpoint, notFound, publicEndpoint } from './repository.js';
import type {
  CreateWebhookEndpointRequest,
  UpdateWebhookEndpointRequest,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './schema.js';
import { openEndpointSecrets, sealEndpointSecrets } from './secrets.js';

/** The use cases that change webhook endpoints (DESIGN D6, D8, D14): create, update, delete, rotate the secret. */

/**
 * Registers an HTTPS endpoint (D8); the creator must hold each event's ability. Returns the secret this once; stored
 * only sealed (D16). Errors: TOKEN_MISSING_ABILITY, CONFLICT ({@link MAX_ENDPOINTS_PER_TEAM}), TIER_LIMIT_REACHED
 * (D20).
 */
export async function createWebhookEndpoint(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  input: Pick<CreateWebhookEndpointRequest, 'name' | 'url' | 'events'> & {
    allowed_ips?: string[];
    max_concurrency?: number;
  },
): Promise<WebhookEndpointWithSecret> {
  const events = [...new Set(input.events)];
  requireEventAbilities(principal, events);
  const now = isoTime(runtime.clock.nowMs());
  const id = newUuid();
  const secret = generateWebhookSecret();
  const stored: StoredWebhookEndpoint = {
    id,
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
    sealed_secrets: await sealEndpointSecrets(integrationsOf(runtime).keyEncryptionKey, principal.teamId, id, {
      secret,
      previous_secret: null,
    }),
    previous_secret_expires_at_ms: null,
    owner_token_id: principal.tokenId,
    owner_abilities: [...principal.abilities],
  };
  // D8 and D20: one atomic counter on the team item, in the same transaction as the endpoint, enforces
  // both the 50-endpoint cap and the tier's limit.
  const cap = {
    max: MAX_ENDPOINTS_PER_TEAM,
    problem: () =>
      new ProblemError(
        'CONFLICT',
        `The team has ${MAX_ENDPOINTS_PER_TEAM} webhook endpoints, the most it can have; delete one first.`,
      ),
  };
  return withinTierLimit(
    runtime,
    principal.teamId,
    'webhook_endpoints',
    () =>
      unitOfWork(runtime, principal.teamId, (tx) => {
        countUsage(tx, principal.teamId, 'webhook_endpoints', 1, { cap: MAX_ENDPOINTS_PER_TEAM });
        webhookEndpointStore.insert(tx, stored);
        return { ...publicEndpoint(stored), secret };
      }),
    cap,
  );
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
  const fields: EndpointFields = {};
  if (input.name !== undefined) fields.name = input.name;
  if (input.url !== undefined) fields.url = input.url;
  if (input.events !== undefined) fields.events = [...new Set(input.events)];
  if (input.allowed_ips !== undefined) fields.allowed_ips = input.allowed_ips;
  if (input.max_concurrency !== undefined) fields.max_concurrency = input.max_concurrency;
  if (repoints) {
    fields.owner_token_id = principal.tokenId;
    fields.owner_abilities = [...principal.abilities];
  }
  if (input.is_active === true) Object.assign(fields, { is_active: true, consecutive_failures: 0, disabled_at: null });
  // Disabling by hand keeps the first `disabled_at` of an endpoint that is already inactive.
  const changed = await webhookEndpointStore.change(
    runtime.store,
    principal.teamId,
    endpointId,
    fields,
    isoTime(runtime.clock.nowMs()),
    { disable: input.is_active === false },
  );
  if (!changed) throw notFound(endpointId);
  return publicEndpoint(changed);
}

/** Deletes an endpoint; its pending deliveries stop at their next attempt. Errors: NOT_FOUND when absent. */
export async function deleteWebhookEndpoint(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  endpointId: string,
): Promise<{ id: string; deleted: true }> {
  return unitOfWork(runtime, principal.teamId, (tx) => {
    webhookEndpointStore.remove(tx, principal.teamId, endpointId, () => notFound(endpointId));
    countUsage(tx, principal.teamId, 'webhook_endpoints', -1);
    return { id: endpointId, deleted: true as const };
  });
}

/**
 * Rotates the signing secret (DESIGN D8). `mode: 'api'` replaces it at once (deliveries carry `v1`
 * only); `mode: 'dashboard'` keeps the old secret for 24 hours (divided by the local TIME_SCALE), during
 * which deliveries carry `v1` (new) and `v0` (old). Returns the endpoint with the new secret, shown once.
 * The secrets are sealed anew (D16: `GenerateDataKey` on AWS); a dashboard rotation first opens the
 * current one (`Decrypt`) to keep it as the previous. Errors: NOT_FOUND, CONFLICT (rotated concurrently).
 */
export async function rotateWebhookEndpointSecret(
  runtime: Pick<Runtime, 'store' | 'clock' | 'timeScale'> & IntegrationRuntime,
  principal: Principal,
  endpointId: string,
  mode: 'api' | 'dashboard' = 'api',
): Promise<WebhookEndpointWithSecret> {
  const current = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!current) throw notFound(endpointId);
  const nowMs = runtime.clock.nowMs();
  const kek = integrationsOf(runtime).keyEncryptionKey;
  const secret = generateWebhookSecret();
  const previousSecret =
    mode === 'dashboard'
      ? (await openEndpointSecrets(kek, principal.teamId, endpointId, current.sealed_secrets)).secret
      : null;
  const previousExpiresAt = mode === 'dashboard' ? dualSigningExpiresAtMs(nowMs, runtime.timeScale) : null;
  const sealed = await sealEndpointSecrets(kek, principal.teamId, endpointId, {
    secret,
    previous_secret: previousSecret,
  });
  const rotated = await webhookEndpointStore.rotateSecrets(runtime.store, principal.teamId, endpointId, {
    sealed,
    previousExpiresAtMs: previousExpiresAt,
    nowIso: isoTime(nowMs),
    // Only the secrets read are rotated, so two concurrent rotations cannot both keep a stale "previous".
    readCiphertext: current.sealed_secrets.ciphertext,
  });
  if (!rotated) throw new ProblemError('CONFLICT', 'The secret was rotated concurrently; retry.');
  return { ...publicEndpoint(rotated), secret };
}
