import {
  parseWebhookTarget,
  pinAddress,
  resolveCandidates,
  systemResolver,
} from '../domain/webhook-deliveries/transport/address-policy.js';
import { pinnedLookup } from '../domain/webhook-deliveries/transport/connections.js';
import type { Runtime } from '../runtime.js';
import * as z from '../schemas/zod.js';
import { ClientMetadata } from './client-metadata.js';
import { findClient, isAllowedRedirectUri, LOOPBACK_HOSTS, type OAuthClientRecord } from './clients.js';

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document; DESIGN D30 amended): a `client_id` that
 * is an HTTPS URL names a JSON document of the client's metadata. It is fetched under the outbound rules of webhook
 * delivery (D9: one DNS answer, a pinned public address, no redirects), capped in size and time, validated, and cached
 * in memory by its `Cache-Control: max-age` within bounds.
 *
 * The cache is per process (per Lambda instance), not in DynamoDB: the document is public and small, a cold instance
 * refetches it once, and a table-backed cache would let anyone who sends `client_id` URLs write items.
 */

/** Largest document read, in BYTES (the draft suggests 5 KB). */
export const MAX_CLIENT_ID_METADATA_DOCUMENT_BYTES = 5 * 1024;
/** Whole-fetch budget (DNS, connect, TLS, headers, body), MILLISECONDS. */
const FETCH_TIMEOUT_MS = 5_000;
/** Freshness without `max-age`, and the bounds of a `max-age`, SECONDS. */
const DEFAULT_FRESH_SECONDS = 5 * 60;
const MAX_FRESH_SECONDS = 24 * 60 * 60;
/** Documents kept at most (least recently stored dropped first). */
const MAX_CACHED_DOCUMENTS = 256;

/** Why a metadata document was refused; `detail` is safe to show to the member or the client. */
export class ClientMetadataDocumentError extends Error {
  constructor(readonly detail: string) {
    super(detail);
    this.name = 'ClientMetadataDocumentError';
  }
}

/** A client known by its metadata document: the client record plus the host its URL names (shown on consent). */
interface MetadataDocumentClient extends OAuthClientRecord {
  host: string;
}

const cache = new Map<string, { client: MetadataDocumentClient; freshUntilMs: number }>();

/**
 * True when `clientId` is meant as a metadata document URL (it starts with `https://`, or `http://` as refused later).
 */
function isMetadataDocumentClientId(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/**
 * Checks a `client_id` URL (draft §3): `https` (loopback `http` only with private targets allowed), no credentials, no
 * fragment, a path other than `/`, in canonical form (so no dot segments). Errors: {@link ClientMetadataDocumentError}.
 */
function checkedClientIdUrl(clientId: string, allowPrivateTargets: boolean): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientMetadataDocumentError('The client_id is not a valid URL.');
  }
  const loopbackHttp = url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname);
  if (url.protocol !== 'https:' && !(allowPrivateTargets && loopbackHttp))
    throw new ClientMetadataDocumentError('A client_id URL must use https.');
  if (
    clientId.length > 2048 ||
    url.href !== clientId ||
    url.username ||
    url.password ||
    url.hash ||
    url.pathname === '/'
  )
    throw new ClientMetadataDocumentError(
      'A client_id URL must be canonical, with a path and without credentials, fragment or dot segments.',
    );
  return url;
}

/**
 * The document's fields: RFC 7591 metadata plus `client_id`; a public client only (no `client_secret`,
 * `token_endpoint_auth_method` absent or `none`).
 */
const MetadataDocument = z.extend(ClientMetadata, {
  client_id: z.string().check(z.maxLength(2048)),
  client_secret: z.optional(z.never()),
  token_endpoint_auth_method: z.optional(z.literal('none')),
});

/**
 * Freshness of a response by its `Cache-Control` (MILLISECONDS): 0 for `no-store`/`no-cache`, else `max-age` bounded.
 */
export function freshnessMs(cacheControl: string | null | undefined): number {
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((part) => part.trim());
  if (directives.some((directive) => directive === 'no-store' || directive === 'no-cache')) return 0;
  const maxAge = directives.map((directive) => /^max-age=(\d+)$/.exec(directive)?.[1]).find(Boolean);
  const seconds = maxAge === undefined ? DEFAULT_FRESH_SECONDS : Math.min(Number(maxAge), MAX_FRESH_SECONDS);
  return seconds * 1000;
}

/**
 * GETs the document at `url` once: resolve once, pin an address allowed by the webhook rules (D9), no redirect, 200
 * only, at most {@link MAX_CLIENT_ID_METADATA_DOCUMENT_BYTES} within {@link FETCH_TIMEOUT_MS}. Returns the body text
 * and the `Cache-Control` header. Errors: {@link ClientMetadataDocumentError}.
 */
async function fetchDocument(
  url: URL,
  allowPrivateTargets: boolean,
): Promise<{ text: string; cacheControl: string | null }> {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  let address: string;
  try {
    if (url.protocol === 'https:') parseWebhookTarget(url.href);
    address = pinAddress(await resolveCandidates(host, systemResolver), null, allowPrivateTargets);
  } catch (error) {
    throw new ClientMetadataDocumentError(`The client_id URL may not be fetched: ${(error as Error).message}.`);
  }
  // Loaded on first use: undici is about 290 KB of the tool server's code, and few clients name a document.
  const { Agent, sendRequest } = await import('../http/undici.js');
  const agent = new Agent({
    connect: { lookup: pinnedLookup(address), timeout: FETCH_TIMEOUT_MS },
    headersTimeout: FETCH_TIMEOUT_MS,
    bodyTimeout: FETCH_TIMEOUT_MS,
    maxResponseSize: MAX_CLIENT_ID_METADATA_DOCUMENT_BYTES,
  });
  try {
    const response = await sendRequest(agent, {
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'membership-service-oauth/1.0' },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    if (response.statusCode !== 200) {
      await response.body.dump();
      throw new ClientMetadataDocumentError(`The client_id URL answered HTTP ${response.statusCode}, not 200.`);
    }
    const cacheControl = response.headers['cache-control'];
    return {
      text: await response.body.text(),
      cacheControl: Array.isArray(cacheControl) ? cacheControl.join(', ') : (cacheControl ?? null),
    };
  } catch (error) {
    if (error instanceof ClientMetadataDocumentError) throw error;
    const code = (error as { code?: string }).code;
    throw new ClientMetadataDocumentError(
      code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE'
        ? `The client metadata document is larger than ${MAX_CLIENT_ID_METADATA_DOCUMENT_BYTES} bytes.`
        : 'The client metadata document could not be fetched.',
    );
  } finally {
    void agent.destroy().catch(() => undefined);
  }
}

/** Validates a fetched document against its URL (draft §4, §8.1): JSON, `client_id` equal to the URL, redirect URIs. */
function clientOfDocument(url: URL, text: string, nowMs: number): MetadataDocumentClient {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ClientMetadataDocumentError('The client metadata document is not JSON.');
  }
  const parsed = MetadataDocument.safeParse(body);
  if (!parsed.success)
    throw new ClientMetadataDocumentError(
      `The client metadata document is not valid: ${parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.')}: ${issue.message}`)
        .join('; ')}.`,
    );
  const document = parsed.data;
  if (document.client_id !== url.href)
    throw new ClientMetadataDocumentError('The client metadata document names another client_id than its URL.');
  const redirects = document.redirect_uris;
  if (redirects.length === 0 || redirects.length > 10 || !redirects.every(isAllowedRedirectUri))
    throw new ClientMetadataDocumentError(
      'The document’s redirect_uris must hold 1 to 10 https URIs or loopback http URIs, without fragments.',
    );
  return {
    client_id: url.href,
    client_id_issued_at: Math.floor(nowMs / 1000),
    client_name: document.client_name ?? null,
    redirect_uris: redirects,
    metadata: {},
    host: url.host,
  };
}

/**
 * The client whose `client_id` is the metadata document URL `clientId`: from the cache while fresh, else fetched and
 * validated (then cached for its {@link freshnessMs}). Errors: {@link ClientMetadataDocumentError}.
 */
async function metadataDocumentClient(
  runtime: Pick<Runtime, 'clock' | 'allowPrivateTargets'>,
  clientId: string,
): Promise<MetadataDocumentClient> {
  const nowMs = runtime.clock.nowMs();
  const cached = cache.get(clientId);
  if (cached && cached.freshUntilMs > nowMs) return cached.client;
  const allowPrivateTargets = runtime.allowPrivateTargets ?? false;
  const url = checkedClientIdUrl(clientId, allowPrivateTargets);
  const { text, cacheControl } = await fetchDocument(url, allowPrivateTargets);
  const client = clientOfDocument(url, text, nowMs);
  cache.delete(clientId);
  const freshMs = freshnessMs(cacheControl);
  if (freshMs > 0) {
    cache.set(clientId, { client, freshUntilMs: nowMs + freshMs });
    if (cache.size > MAX_CACHED_DOCUMENTS) cache.delete(cache.keys().next().value!);
  }
  return client;
}

/**
 * The client `clientId` names (DESIGN D30): a metadata document URL ({@link metadataDocumentClient}) or a registered
 * client; null when no client is registered under it. Errors: {@link ClientMetadataDocumentError}.
 */
export async function resolveClient(
  runtime: Pick<Runtime, 'store' | 'clock' | 'allowPrivateTargets'>,
  clientId: string,
): Promise<(OAuthClientRecord & { host?: string }) | null> {
  if (isMetadataDocumentClientId(clientId)) return metadataDocumentClient(runtime, clientId);
  return findClient(runtime.store, clientId);
}
