import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import { integrationsOf } from '../../integrations.js';
import type { Runtime } from '../../runtime.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { webhookEndpointStore } from '../../store/webhook-endpoints/endpoints.js';
import { DEFAULT_MAX_CONCURRENCY, MAX_ENDPOINTS_PER_TEAM } from './policy.js';
import type { ListWebhookEndpointsQuery, WebhookEndpoint } from './schema.js';
import type { StoredWebhookEndpoint } from './record.js';
import { openEndpointSecrets, type EndpointSecrets } from './secrets.js';

/**
 * Reads of webhook endpoints (DESIGN D6, D8, D14) over `webhookEndpointStore` (shared/store): the public view,
 * the team's list and the dispatcher's endpoint copies; changes.ts holds the use cases, delivery-slots.ts
 * the attempt counters and concurrency slots (D8, D24).
 */

/** NOT_FOUND for a webhook endpoint id (absent or foreign: the same answer). */
export const notFound = (endpointId: string) => new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);

/** Public view of a stored endpoint (never its secrets nor its owner). */
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
    max_concurrency: item.max_concurrency ?? DEFAULT_MAX_CONCURRENCY,
    created_at: item.created_at,
    updated_at: item.updated_at,
  };
}

/**
 * Reads the stored endpoint (with its sealed secrets) or null. Strongly consistent. Throws StoredRecordError for an
 * item that does not match its record schema.
 */
export async function loadWebhookEndpoint(
  runtime: Pick<Runtime, 'store'>,
  teamId: string,
  endpointId: string,
): Promise<StoredWebhookEndpoint | null> {
  return webhookEndpointStore.load(runtime.store, teamId, endpointId);
}

/** Reads one endpoint of the principal's team (never its secret). Errors: NOT_FOUND when absent or foreign. */
export async function getWebhookEndpoint(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  endpointId: string,
): Promise<WebhookEndpoint> {
  const item = await loadWebhookEndpoint(runtime, principal.teamId, endpointId);
  if (!item) throw notFound(endpointId);
  return publicEndpoint(item);
}

/** Every stored endpoint of a team, with sealed secrets (at most {@link MAX_ENDPOINTS_PER_TEAM}); used by fan-out. */
export async function allWebhookEndpoints(
  runtime: Pick<Runtime, 'store'>,
  teamId: string,
): Promise<StoredWebhookEndpoint[]> {
  return (await webhookEndpointStore.page(runtime.store, teamId, { limit: MAX_ENDPOINTS_PER_TEAM })).data;
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
  const result = await webhookEndpointStore.page(runtime.store, principal.teamId, query);
  return { data: result.data.map(publicEndpoint), next_cursor: result.next_cursor };
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
 * `endpointSlots.item`, whose condition on the revision refuses a stale one.
 */
export async function cachedWebhookEndpoint(
  store: Store,
  teamId: string,
  endpointId: string,
): Promise<StoredWebhookEndpoint | null> {
  const copy = endpointCopies.get(copyKey(store, teamId, endpointId));
  if (copy) return copy;
  const endpoint = await loadWebhookEndpoint({ store }, teamId, endpointId);
  if (endpoint) rememberWebhookEndpoint(store, endpoint);
  return endpoint;
}

/**
 * Keeps `endpoint` (as just read from `store`) as the process's copy for {@link cachedWebhookEndpoint}, dropping the
 * oldest beyond {@link ENDPOINT_CACHE_SIZE}.
 */
export function rememberWebhookEndpoint(store: Store, endpoint: StoredWebhookEndpoint): void {
  const key = copyKey(store, endpoint.team_id, endpoint.id);
  endpointCopies.delete(key);
  endpointCopies.set(key, endpoint);
  if (endpointCopies.size > ENDPOINT_CACHE_SIZE) endpointCopies.delete(endpointCopies.keys().next().value!);
}

/**
 * Opened signing secrets by table, team and endpoint, with the endpoint revision they belong to (oldest first, at most
 * {@link ENDPOINT_CACHE_SIZE}).
 */
const openedSecrets = new Map<string, { revision: number; secrets: Promise<EndpointSecrets> }>();

/**
 * The signing secrets of `endpoint` (as read from `store`), opened with the runtime's key-encryption key
 * at most once per process and endpoint revision (every change of the secrets raises the revision): one
 * data-key unwrap (`Decrypt` on AWS) when the revision is new here, none for later deliveries. Rejects
 * with `CredentialDecryptionError` (nothing is kept then, so the next attempt tries again).
 */
export function signingSecretsOf(
  runtime: Pick<Runtime, 'store' | 'integrations'>,
  endpoint: Pick<StoredWebhookEndpoint, 'id' | 'team_id' | 'revision' | 'sealed_secrets'>,
): Promise<EndpointSecrets> {
  const key = copyKey(runtime.store, endpoint.team_id, endpoint.id);
  const opened = openedSecrets.get(key);
  if (opened?.revision === endpoint.revision) return opened.secrets;
  const secrets = openEndpointSecrets(
    integrationsOf(runtime).keyEncryptionKey,
    endpoint.team_id,
    endpoint.id,
    endpoint.sealed_secrets,
  );
  openedSecrets.delete(key);
  openedSecrets.set(key, { revision: endpoint.revision, secrets });
  if (openedSecrets.size > ENDPOINT_CACHE_SIZE) openedSecrets.delete(openedSecrets.keys().next().value!);
  secrets.catch(() => {
    if (openedSecrets.get(key)?.secrets === secrets) openedSecrets.delete(key);
  });
  return secrets;
}
