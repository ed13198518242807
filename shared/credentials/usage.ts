/**
 * Which code needs the credentials key (DESIGN D16, D23: least privilege), derived from what an operation
 * emits, so `lib/` grants the key only to the functions that open or seal credentials, and new operations
 * get the right grant without touching `lib/`. Metadata only (no runtime code): `lib/` imports it.
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

/** Events whose operations store a new credential (sealing it: `kms:GenerateDataKey`, besides opening the one it replaces). */
const CREDENTIAL_SEALING_EVENTS: readonly string[] = ['project.bot_connected', 'project.payment_provider_connected'];

/** How a function may use the credentials key. */
export type CredentialKeyUse = 'none' | 'open' | 'seal';

/**
 * The key use of code that may emit `events` (an operation's, or the union of a function's operations'); at
 * least `open` when it `callsProvider` (an operation calling a provider with the stored key while emitting
 * nothing, e.g. a checkout session, D26).
 */
export function credentialKeyUse(events: readonly string[], callsProvider = false): CredentialKeyUse {
  if (events.some((event) => CREDENTIAL_SEALING_EVENTS.includes(event))) return 'seal';
  return callsProvider || events.some((event) => CREDENTIAL_OPENING_EVENTS.includes(event)) ? 'open' : 'none';
}

/** The KMS actions of a {@link CredentialKeyUse}. */
export function credentialKeyActions(use: CredentialKeyUse): string[] {
  if (use === 'none') return [];
  return use === 'open' ? ['kms:Decrypt'] : ['kms:Decrypt', 'kms:GenerateDataKey'];
}
