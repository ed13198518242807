import {
  openSecret,
  sealSecret,
  type EncryptionContext,
  type KeyEncryptionKey,
  type SealedSecret,
} from '../../credentials/envelope.js';

/**
 * A webhook endpoint's signing secrets at rest (DESIGN D8, D16): sealed together with the credentials'
 * envelope encryption (`credentials/envelope.ts`: a fresh data key from the key-encryption key — KMS on
 * AWS — and AES-256-GCM), bound to the team and the endpoint, so the endpoint item never holds a secret in
 * clear and one data-key unwrap opens both. Opened only to sign deliveries and to keep the old secret in a
 * dashboard rotation; never returned by a read.
 */

/**
 * The opened signing secrets of an endpoint: the current `whsec_...` and, after a dashboard rotation, the previous one.
 */
export interface EndpointSecrets {
  secret: string;
  /**
   * The secret before the last dashboard rotation (signs `v0` until `previous_secret_expires_at_ms`); null otherwise.
   */
  previous_secret: string | null;
}

/**
 * The encryption context of an endpoint's secrets: its team and id (a sealed value copied to another endpoint does not
 * open).
 */
function contextOf(teamId: string, endpointId: string): EncryptionContext {
  return { kind: 'webhook_endpoint', team_id: teamId, endpoint_id: endpointId };
}

/**
 * Seals `secrets` of endpoint `endpointId` of `teamId` under a new data key of `kek` (one `GenerateDataKey` on AWS).
 */
export async function sealEndpointSecrets(
  kek: KeyEncryptionKey,
  teamId: string,
  endpointId: string,
  secrets: EndpointSecrets,
): Promise<SealedSecret> {
  return sealSecret(
    kek,
    JSON.stringify({ secret: secrets.secret, previous_secret: secrets.previous_secret }),
    contextOf(teamId, endpointId),
  );
}

/**
 * Opens the sealed secrets of endpoint `endpointId` of `teamId` (one data-key unwrap: `Decrypt` on AWS).
 * Throws `CredentialDecryptionError` when they do not open (tampered with, moved, another key).
 */
export async function openEndpointSecrets(
  kek: KeyEncryptionKey,
  teamId: string,
  endpointId: string,
  sealed: SealedSecret,
): Promise<EndpointSecrets> {
  const opened = JSON.parse(await openSecret(kek, sealed, contextOf(teamId, endpointId))) as EndpointSecrets;
  return { secret: opened.secret, previous_secret: opened.previous_secret };
}
