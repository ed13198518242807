import { newTokenSecret, sha256 } from '../../auth/principal.js';
import { housekeepingTtl } from '../../store/ttl.js';
import type { Clock } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import { portalSessionStore } from '../../store/portal-sessions.js';
import type { Store } from '../../store/store.js';
import type { Transaction } from '../../store/unit-of-work.js';
import { parseStoredJoinConfirmation, type JoinConfirmation } from './record.js';

/**
 * A free join's one-time confirmation link (DESIGN D26, D32), the sign-in link's machinery: `pjc_<secret>` in the
 * e-mailed URL, stored only as its SHA-256 (the item's key), single use (its deletion joins the activating
 * transaction), valid until the subscription it activates expires (D15's 23 hours of `incomplete`). Expiry is checked
 * in code; TTL is housekeeping.
 */

const CONFIRMATION_PREFIX = 'pjc_';

/** The SHA-256 (hex) of a presented confirmation token: its item's key. */
const hashOf = (token: string) => sha256(token).toString('hex');

/** The path of the confirmation page of project `projectId` (the token goes in its `token` query parameter). */
const confirmationPath = (projectId: string) => `/join/${projectId}/confirm`;

/**
 * Makes a confirmation link for subscription `subscriptionId` of subscriber `subscriberId` (project `projectId`, team
 * `teamId`) that works once until `expiresAtMs` (epoch ms). Returns its URL under the service's public base URL (the
 * path alone when that is unknown).
 */
export async function createConfirmationLink(
  runtime: { store: Store } & IntegrationRuntime,
  link: { teamId: string; projectId: string; subscriberId: string; subscriptionId: string; expiresAtMs: number },
): Promise<string> {
  const token = `${CONFIRMATION_PREFIX}${newTokenSecret()}`;
  await portalSessionStore.createConfirmation(runtime.store, hashOf(token), {
    ...link,
    ttlSeconds: housekeepingTtl(link.expiresAtMs),
  });
  const path = `${confirmationPath(link.projectId)}?token=${token}`;
  const base = integrationsOf(runtime).publicBaseUrl;
  return base ? `${base}${path}` : path;
}

/** The one answer to a confirmation link that cannot be used (unknown, used, expired, another project's). */
export const unusableConfirmation = () =>
  new ProblemError(
    'NOT_FOUND',
    'This confirmation link cannot be used: it is unknown, expired or already used. Join again from the join page.',
  );

/** A live confirmation link of project `projectId`: what it confirms, and how to spend it in a transaction. */
export interface LiveConfirmation extends JoinConfirmation {
  /** Adds the link's deletion to `tx` (conditional: a concurrent use makes the transaction a lost race). */
  take(tx: Transaction): void;
}

/**
 * The live confirmation link `token` names in project `projectId`. Errors: NOT_FOUND ({@link unusableConfirmation}) for
 * a malformed, unknown, used, expired or another project's link (one answer).
 */
export async function readConfirmation(
  runtime: { store: Store; clock: Clock },
  projectId: string,
  token: string,
): Promise<LiveConfirmation> {
  const presented = token.trim();
  if (!presented.startsWith(CONFIRMATION_PREFIX) || presented.length > 100) throw unusableConfirmation();
  const linkSha256 = hashOf(presented);
  const item = await portalSessionStore.readConfirmation(runtime.store, linkSha256);
  const stored = item ? parseStoredJoinConfirmation(item) : null;
  if (!stored || stored.project_id !== projectId || stored.expires_at_ms <= runtime.clock.nowMs())
    throw unusableConfirmation();
  return { ...stored, take: (tx) => portalSessionStore.takeConfirmation(tx, linkSha256) };
}
