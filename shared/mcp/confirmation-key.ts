import { hkdfSync } from 'node:crypto';
import { newWrappedDataKey } from '../credentials/envelope.js';
import { integrationsOf, type IntegrationRuntime } from '../integrations.js';
import type { Store } from '../store/store.js';
import { loadOrStoreWrappedConfirmationKey } from '../store/confirmation-key.js';

/**
 * The key of the confirmation tokens of destructive tool calls (DESIGN D5): a 32-byte service key made once, stored
 * wrapped by the credentials key (D16: nothing new to configure) and opened once per process; each team's key is
 * derived from it (HKDF-SHA256), so a token is an HMAC no client can compute and no other team's call accepts.
 */

/** The encryption context of the stored service key. */
const SERVICE_KEY_CONTEXT = { kind: 'mcp_confirmation_key' } as const;

/** The opened service key of each table (one table per process on AWS; tests make many). */
const serviceKeys = new Map<string, Promise<Buffer>>();

/** The service key of `runtime`'s table: the stored one opened, or a new one stored first. */
async function openServiceKey(runtime: IntegrationRuntime & { store: Store }): Promise<Buffer> {
  const kek = integrationsOf(runtime).keyEncryptionKey;
  const wrapped = await loadOrStoreWrappedConfirmationKey(runtime.store, () =>
    newWrappedDataKey(kek, SERVICE_KEY_CONTEXT),
  );
  return kek.unwrapDataKey(wrapped, SERVICE_KEY_CONTEXT);
}

/** The confirmation key (32 bytes) of team `teamId`. Throws on store or key errors (then the next call tries again). */
export async function teamConfirmationKey(
  runtime: IntegrationRuntime & { store: Store },
  teamId: string,
): Promise<Buffer> {
  const table = runtime.store.tableName;
  let serviceKey = serviceKeys.get(table);
  if (!serviceKey) {
    serviceKey = openServiceKey(runtime);
    serviceKeys.set(table, serviceKey);
    serviceKey.catch(() => serviceKeys.delete(table));
  }
  return Buffer.from(hkdfSync('sha256', await serviceKey, teamId, 'membership-service mcp confirmation v1', 32));
}
