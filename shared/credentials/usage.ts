/**
 * Which code needs the credentials key (DESIGN D16, D23: least privilege), derived from what an operation
 * emits and declares (`callsProvider`, `sealsSecret`), so `lib/` grants the key only to the functions that
 * open or seal secrets, and new operations get the right grant without touching `lib/`. Metadata only (no
 * runtime code): `lib/` imports it.
 */

/** Events whose operations call a platform or provider with a stored credential (opening it: `kms:Decrypt`). */
const CREDENTIAL_OPENING_EVENTS: readonly string[] = [
  'member.access_granted',
  'member.access_revoked',
  'member.banned',
  'member.unbanned',
  'member.kicked',
  'project.bot_disconnected',
  // Stripe: plan sync and refunds call Stripe with the project's stored key.
  'plan.synced',
  'plan.sync_failed',
  'payment.refunded',
];

/**
 * Events whose operations store a new credential (sealing it: `kms:GenerateDataKey`, besides opening the one it
 * replaces).
 */
const CREDENTIAL_SEALING_EVENTS: readonly string[] = ['project.bot_connected', 'project.payment_provider_connected'];

/**
 * How a function may use the credentials key: `open` (unwrap data keys), `seal` (make new data keys only:
 * a webhook endpoint's secrets), both, or none.
 */
export type CredentialKeyUse = 'none' | 'open' | 'seal' | 'open-and-seal';

/** What decides an operation's key use (the fields of an operation definition that say it). */
export interface KeyUsingOperation {
  readonly events: readonly string[];
  /** Calls a provider with the stored key while maybe emitting nothing (e.g. a checkout session, D26): opens. */
  readonly callsProvider?: boolean;
  /** Seals a new secret of its own with the key (a webhook endpoint's signing secret, D8): seals. */
  readonly sealsSecret?: boolean;
}

/**
 * The key use of code that may run `operations` (one route's operation, or the union of a function's):
 * it opens when one calls a provider or emits an opening or sealing event (a replaced credential is
 * opened first), and seals when one emits a sealing event or seals a secret of its own.
 */
export function credentialKeyUse(operations: readonly KeyUsingOperation[]): CredentialKeyUse {
  const emits = (list: readonly string[]) =>
    operations.some((operation) => operation.events.some((event) => list.includes(event)));
  const seals = emits(CREDENTIAL_SEALING_EVENTS) || operations.some((operation) => operation.sealsSecret === true);
  const opens =
    emits(CREDENTIAL_SEALING_EVENTS) ||
    emits(CREDENTIAL_OPENING_EVENTS) ||
    operations.some((operation) => operation.callsProvider === true);
  if (opens) return seals ? 'open-and-seal' : 'open';
  return seals ? 'seal' : 'none';
}

/** The KMS actions of a {@link CredentialKeyUse}: `kms:Decrypt` to open, `kms:GenerateDataKey` to seal. */
export function credentialKeyActions(use: CredentialKeyUse): string[] {
  return [
    ...(use === 'open' || use === 'open-and-seal' ? ['kms:Decrypt'] : []),
    ...(use === 'seal' || use === 'open-and-seal' ? ['kms:GenerateDataKey'] : []),
  ];
}
