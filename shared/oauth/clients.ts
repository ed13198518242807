import { randomUUID } from 'node:crypto';
import type { Clock } from '../clock.js';
import { oauthClientStore } from '../store/oauth-clients.js';
import type { Store } from '../store/store.js';

/**
 * The OAuth authorization server's registered public clients (RFC 7591; DESIGN D30): which redirect URIs a
 * client may register, storing a client and reading it back.
 */

/** A registered client as stored (RFC 7591 metadata the service keeps). */
export interface OAuthClientRecord {
  client_id: string;
  client_id_issued_at: number;
  client_name: string | null;
  redirect_uris: string[];
  /** The registration response's other metadata, echoed as registered. */
  metadata: Record<string, unknown>;
}

/** The loopback host names a public client's `http` redirect URI may use (RFC 8252 §7.3). */
export const LOOPBACK_HOSTS: readonly string[] = ['127.0.0.1', '[::1]', 'localhost'];

/**
 * True for a redirect URI a public client may register: `https`, or `http` on a loopback host (127.0.0.1, [::1],
 * localhost); never with a fragment.
 */
export function isAllowedRedirectUri(value: string): boolean {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  if (url.hash || value.includes('#')) return false;
  if (url.protocol === 'https:') return true;
  return url.protocol === 'http:' && LOOPBACK_HOSTS.includes(url.hostname);
}

/**
 * Stores a new public client (RFC 7591; DESIGN D30) with a random `client_id`; the caller validated the
 * metadata. Clients are stored per client, not per team: they register before anyone signs in.
 */
export async function registerClient(
  store: Store,
  clock: Clock,
  input: { client_name?: string; redirect_uris: string[]; metadata: Record<string, unknown> },
): Promise<OAuthClientRecord> {
  const record: OAuthClientRecord = {
    client_id: randomUUID(),
    client_id_issued_at: Math.floor(clock.nowMs() / 1000),
    client_name: input.client_name?.slice(0, 100) ?? null,
    redirect_uris: input.redirect_uris,
    metadata: input.metadata,
  };
  await oauthClientStore.create(store, record);
  return record;
}

/** The registered client `clientId`, or null. */
export async function findClient(store: Store, clientId: string): Promise<OAuthClientRecord | null> {
  if (!/^[0-9a-f-]{36}$/.test(clientId)) return null;
  const client = await oauthClientStore.find(store, clientId);
  if (!client) return null;
  return { ...client, client_name: client.client_name ?? null, metadata: client.metadata ?? {} };
}
