import { newTokenSecret, sha256 } from '../../auth/principal.js';
import { integrationsOf } from '../../integrations.js';
import type { Runtime } from '../../runtime.js';
import { messageStore } from '../../store/messages.js';
import { UNSUBSCRIBE_PATH } from './paths.js';
import { DAY_MS } from '../../clock.js';

/**
 * One-click unsubscribe (RFC 8058, DESIGN D32): each non-essential e-mail carries a link of its own
 * (`/messages/unsubscribe?token=msu_<secret>`), stored only as the SHA-256 of its token and kept a year. Following it
 * (GET shows a confirmation, POST opts out) stores the subscriber's opt-out.
 */

/** Prefix of an unsubscribe token. */
const UNSUBSCRIBE_PREFIX = 'msu_';
/** How long an unsubscribe link works (milliseconds): a year. */
const UNSUBSCRIBE_LIFETIME_MS = 365 * DAY_MS;

/** Makes an unsubscribe link for a subscriber: its absolute URL (the path alone when the base URL is unknown). */
export async function createUnsubscribeLink(
  runtime: Pick<Runtime, 'store' | 'clock' | 'integrations'>,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<string> {
  const token = `${UNSUBSCRIBE_PREFIX}${newTokenSecret()}`;
  const expiresAtMs = runtime.clock.nowMs() + UNSUBSCRIBE_LIFETIME_MS;
  await messageStore.createUnsubscribeLink(runtime.store, sha256(token).toString('hex'), {
    teamId,
    projectId,
    subscriberId,
    expiresAtMs,
  });
  return `${integrationsOf(runtime).publicBaseUrl ?? ''}${UNSUBSCRIBE_PATH}?token=${token}`;
}

/**
 * Opts out the subscriber of an unsubscribe token (RFC 8058 one-click POST). True when the token was known and not
 * expired (the opt-out is stored; doing it again changes nothing), false otherwise. `options.identify` hears the
 * token's team before the opt-out (the pipeline's activity entry of a public call).
 */
export async function unsubscribeWithToken(
  runtime: Pick<Runtime, 'store' | 'clock'>,
  token: string,
  options: { identify?: (teamId: string) => void } = {},
): Promise<boolean> {
  if (!token.startsWith(UNSUBSCRIBE_PREFIX)) return false;
  const link = await messageStore.readUnsubscribeLink(runtime.store, sha256(token).toString('hex'));
  if (!link || Number(link.expires_at_ms) <= runtime.clock.nowMs()) return false;
  const subscriber = {
    teamId: String(link.team_id),
    projectId: String(link.project_id),
    subscriberId: String(link.subscriber_id),
  };
  options.identify?.(subscriber.teamId);
  const preferences = await messageStore.readPreferences(
    runtime.store,
    subscriber.teamId,
    subscriber.projectId,
    subscriber.subscriberId,
  );
  if (!preferences?.opted_out_at)
    await messageStore.setPreference(
      runtime.store,
      subscriber,
      'opted_out_at',
      new Date(runtime.clock.nowMs()).toISOString(),
    );
  return true;
}
