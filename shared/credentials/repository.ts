import { deleteItemsUnder } from '../store/expressions.js';
import { entity, keys } from '../store/keys.js';
import type { Store } from '../store/store.js';
import type { Item } from '../store/requests.js';
import type { Transaction } from '../store/unit-of-work.js';
import * as z from '../schemas/zod.js';
import { Timestamp } from '../schemas/common.js';
import { recordParser } from '../store/records.js';
import { openSecret, SealedSecret, sealSecret, type EncryptionContext, type KeyEncryptionKey } from './envelope.js';

/**
 * Stored credentials (D16, D22): an integration's secrets sealed (`envelope.ts`) in one item per project and kind,
 * keyed by project id alone (inbound hooks know only that). Opened only to call a provider or check a request; never
 * returned, logged, or put in an event or error. Writes join the caller's transaction.
 */

/**
 * The kinds of credential, one item each per project (a closed list, written once): `telegram_bot` (secrets
 * `bot_token`, `webhook_secret`) and `stripe` (secrets `secret_key`: the restricted API key; `webhook_secret`:
 * the `whsec_...` signing secret of the project's Stripe webhook endpoint) and `discord_bot` (secrets `bot_token`,
 * `client_secret`: the OAuth2 client secret; public `application_id`, `public_key`, `platform_bot_id`) and
 * `discord_user` (one per subscriber, `subjectId`: their Discord OAuth2 `access_token` and `refresh_token`).
 */
export const CREDENTIAL_KINDS = ['telegram_bot', 'stripe', 'discord_bot', 'discord_user'] as const;
/** A credential kind. */
export type CredentialKind = (typeof CREDENTIAL_KINDS)[number];

/** Which credential: its project (and team) and kind. */
export interface CredentialRef {
  teamId: string;
  projectId: string;
  kind: CredentialKind;
  /**
   * Whose credential within the project, for kinds held per person (`discord_user`: the subscriber id); undefined for
   * the project's own.
   */
  subjectId?: string;
}

/** The key of a credential: its project, its kind and, for a person's credential, its subject. */
function credentialKey(projectId: string, kind: CredentialKind, subjectId?: string) {
  return keys.credential(projectId, subjectId === undefined ? kind : `${kind}#${subjectId}`);
}

/** What may be shown of a stored credential: never a secret, only its kind, public fields and times. */
export interface CredentialDescription {
  kind: CredentialKind;
  team_id: string;
  project_id: string;
  /** Non-secret facts recorded with it (e.g. the bot's id); strings only. */
  public: Record<string, string>;
  /** The names of the sealed secrets (not their values). */
  secret_names: string[];
  created_at: string;
}

/** The encryption context of a credential: binds the ciphertext to its team, project and kind. */
function contextOf(ref: CredentialRef): EncryptionContext {
  return {
    team_id: ref.teamId,
    project_id: ref.projectId,
    kind: ref.kind,
    ...(ref.subjectId === undefined ? {} : { subject_id: ref.subjectId }),
  };
}

/**
 * Seals `secrets` (name → value, e.g. `{ bot_token, webhook_secret }`) for `ref` with `kek` and returns the
 * item to store (with `publicFields`, which must hold nothing secret). Asks the key-encryption key for one
 * data key (one KMS call on AWS).
 */
export async function sealCredential(
  kek: KeyEncryptionKey,
  ref: CredentialRef,
  secrets: Record<string, string>,
  publicFields: Record<string, string>,
  nowIso: string,
): Promise<Item> {
  const sealed = await sealSecret(kek, JSON.stringify(secrets), contextOf(ref));
  return {
    ...credentialKey(ref.projectId, ref.kind, ref.subjectId),
    entity: entity.credential,
    ...(ref.subjectId === undefined ? {} : { subject_id: ref.subjectId }),
    team_id: ref.teamId,
    project_id: ref.projectId,
    kind: ref.kind,
    public: publicFields,
    secret_names: Object.keys(secrets).sort(),
    sealed,
    created_at: nowIso,
  };
}

/**
 * Adds to `tx` storing a sealed credential item ({@link sealCredential}), replacing the one of the same project and
 * kind.
 */
export function putCredential(tx: Transaction, item: Item): void {
  tx.put(item);
}

/**
 * Adds to `tx` deleting the credential of `projectId` and `kind` (and `subjectId` for a person's; nothing when there is
 * none).
 */
export function deleteCredential(tx: Transaction, projectId: string, kind: CredentialKind, subjectId?: string): void {
  tx.delete(credentialKey(projectId, kind, subjectId));
}

/**
 * Deletes every person's credential of `kind` in `projectId` (`discord_user`: one per subscriber), outside any
 * transaction: pages of the project's credential partition, one DeleteItem each. Returns how many were
 * deleted. For a project deleted or a bot disconnected after its own transaction committed.
 */
export async function deleteSubjectCredentials(store: Store, projectId: string, kind: CredentialKind): Promise<number> {
  const { pk, sk } = credentialKey(projectId, kind, '');
  return deleteItemsUnder(store, pk, sk);
}

/**
 * A credential item as stored (`keys.credential`, DESIGN D16, D22): its kind, owner, public fields and
 * secret names (absent on items stored without any: read as none), times and the sealed secrets. A parse
 * error names the item's key and the failing attribute paths, never a value.
 */
const StoredCredential = z.object({
  kind: z.enum(CREDENTIAL_KINDS),
  team_id: z.string(),
  project_id: z.string(),
  public: z.optional(z.record(z.string(), z.string())),
  secret_names: z.optional(z.array(z.string())),
  created_at: Timestamp,
  sealed: SealedSecret,
});

/** Parses a credential item (throws StoredRecordError naming its key when it does not match). */
const parseStoredCredential = recordParser(entity.credential, StoredCredential);

/** The {@link CredentialDescription} of a parsed credential (absent public fields and secret names: none). */
function descriptionOf(stored: Omit<z.output<typeof StoredCredential>, 'sealed'>): CredentialDescription {
  return {
    kind: stored.kind,
    team_id: stored.team_id,
    project_id: stored.project_id,
    public: stored.public ?? {},
    secret_names: stored.secret_names ?? [],
    created_at: stored.created_at,
  };
}

/**
 * What may be shown of a stored credential item, without opening it (throws StoredRecordError naming its key when it
 * does not match).
 */
export function describeCredential(item: Item): CredentialDescription {
  return descriptionOf(parseStoredCredential(item));
}

/**
 * Reads and opens the credential of `projectId` and `kind` (and `subjectId` for a person's; strongly
 * consistent): its description and its secrets, or null when none is stored — or when `teamId` is given and
 * the credential belongs to another team. Throws `CredentialDecryptionError` when it does not open.
 */
export async function openCredential(
  store: Store,
  kek: KeyEncryptionKey,
  projectId: string,
  kind: CredentialKind,
  teamId?: string,
  subjectId?: string,
): Promise<{ description: CredentialDescription; secrets: Record<string, string> } | null> {
  const item = await store.get(credentialKey(projectId, kind, subjectId));
  if (!item) return null;
  const { sealed, ...stored } = parseStoredCredential(item);
  const description = descriptionOf(stored);
  if (teamId !== undefined && description.team_id !== teamId) return null;
  const plaintext = await openSecret(
    kek,
    sealed,
    contextOf({ teamId: description.team_id, projectId, kind, subjectId }),
  );
  return { description, secrets: JSON.parse(plaintext) as Record<string, string> };
}

/** Per key-encryption key: a sealed decoy of a credential's size, opened when there is no credential to open. */
const decoys = new WeakMap<KeyEncryptionKey, Promise<{ sealed: SealedSecret; context: EncryptionContext }>>();

/** The decoy of `kek` (sealed once per process: one data key, as a real credential's). */
function decoyOf(kek: KeyEncryptionKey): Promise<{ sealed: SealedSecret; context: EncryptionContext }> {
  let decoy = decoys.get(kek);
  if (!decoy) {
    const context = contextOf({ teamId: 'decoy', projectId: 'decoy', kind: 'stripe' });
    const secrets = JSON.stringify({ secret_key: 'x'.repeat(107), webhook_secret: 'x'.repeat(38) });
    decoy = sealSecret(kek, secrets, context).then((sealed) => ({ sealed, context }));
    decoys.set(kek, decoy);
  }
  return decoy;
}

/**
 * {@link openCredential} for an inbound hook, which must not tell whether a project exists by its timing
 * (DESIGN D22): when no credential of `projectId` and `kind` is stored (an unknown or unconnected project),
 * a decoy of the same size is opened instead — the same data-key unwrap (one KMS call on AWS) and
 * decryption — before null is returned.
 */
export async function openCredentialInConstantWork(
  store: Store,
  kek: KeyEncryptionKey,
  projectId: string,
  kind: CredentialKind,
) {
  const credential = await openCredential(store, kek, projectId, kind);
  if (credential) return credential;
  const decoy = await decoyOf(kek);
  JSON.parse(await openSecret(kek, decoy.sealed, decoy.context));
  return null;
}
