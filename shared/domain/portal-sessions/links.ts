import { randomBytes } from 'node:crypto';
import { newTokenSecret, sha256, type Principal } from '../../auth/principal.js';
import type { Ability } from '../../catalogues/abilities.js';
import { HOUR_MS, MINUTE_MS, isoTime, type Clock } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUlid } from '../../ids.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import { portalSessionStore } from '../../store/portal-sessions.js';
import type { Store } from '../../store/store.js';
import { subscriberStore } from '../../store/subscribers.js';
import { subscriberNotFound } from '../subscribers/repository.js';
import { touchSession } from '../../auth/idle-sessions.js';
import { housekeepingTtl } from '../../store/ttl.js';
import { parseStoredPortalLink, parseStoredPortalSession, type PortalSession } from './record.js';

/**
 * The subscriber portal's sign-in (DESIGN D27): one-time links (30 minutes, single use) and sessions (1 hour
 * idle), in DynamoDB. Each credential (`ppl_<secret>` in a link, `pps_<secret>` in the cookie) is stored only
 * as its SHA-256, which is also its item's key. Expiry is checked in code (TTL is housekeeping only). The
 * portal runs the D13 operations with {@link subscriberPrincipal}.
 */

/** A portal link is valid this long (milliseconds): 30 minutes. */
export const PORTAL_LINK_LIFETIME_MS = 30 * MINUTE_MS;
/** A sign-in link e-mailed on request ("E-mail me a sign-in link", DESIGN D32) is valid this long: 15 minutes. */
export const SIGN_IN_LINK_LIFETIME_MS = 15 * MINUTE_MS;
/** A portal session ends after this long without a request (milliseconds): 1 hour idle. */
export const PORTAL_SESSION_IDLE_MS = HOUR_MS;

const LINK_PREFIX = 'ppl_';
const SESSION_PREFIX = 'pps_';

/** What the store and the clock of a runtime give the portal, and the service's public base URL. */
type PortalRuntime = { store: Store; clock: Clock } & IntegrationRuntime;

export type { PortalSession };

/** The SHA-256 (hex) of a presented credential: its item's key. */
const hashOf = (credential: string) => sha256(credential).toString('hex');

/**
 * Makes a one-time portal link for subscriber `subscriberId` of project `projectId` of team `teamId` (the
 * operation, the welcome page, Telegram's `/account`, the sign-in-link message): valid `options.lifetimeMs` (default
 * {@link PORTAL_LINK_LIFETIME_MS}), usable once.
 * `path` is `/portal/{project_id}/sign-in?token=...`; `url` is it under the service's public base URL, or the
 * path itself when that is unknown. Errors: NOT_FOUND (no such subscriber in that project).
 */
export async function createPortalLink(
  runtime: PortalRuntime,
  teamId: string,
  projectId: string,
  subscriberId: string,
  options: { lifetimeMs?: number } = {},
): Promise<{ url: string; path: string; expires_at: string }> {
  if (!(await subscriberStore.exists(runtime.store, teamId, projectId, subscriberId)))
    throw subscriberNotFound(subscriberId);
  const nowMs = runtime.clock.nowMs();
  const token = `${LINK_PREFIX}${newTokenSecret()}`;
  const expiresAtMs = nowMs + (options.lifetimeMs ?? PORTAL_LINK_LIFETIME_MS);
  await portalSessionStore.createLink(runtime.store, hashOf(token), {
    teamId,
    projectId,
    subscriberId,
    expiresAtMs,
    ttlSeconds: housekeepingTtl(expiresAtMs),
  });
  const path = `/portal/${projectId}/sign-in?token=${token}`;
  const base = integrationsOf(runtime).publicBaseUrl;
  return { url: base ? `${base}${path}` : path, path, expires_at: isoTime(expiresAtMs) };
}

const unusableLink = () =>
  new ProblemError(
    'NOT_FOUND',
    'This portal link cannot be used: it is unknown, expired or already used. Ask for a new one.',
  );

/**
 * Uses a portal link of project `projectId` once and starts a portal session: the link is deleted with a
 * condition, so of two concurrent uses one gets the session. Returns the session and the cookie value
 * (`pps_<secret>`, shown only here); `identify` learns the link's team once the link is found for this project (a
 * refusal after that is the team's to see). Errors: NOT_FOUND for an unknown, expired, used or other project's link
 * (one answer; another project's link stays usable there).
 */
export async function consumePortalLink(
  runtime: PortalRuntime,
  projectId: string,
  token: string,
  identify: (teamId: string) => void = () => undefined,
): Promise<{ cookieValue: string; session: PortalSession }> {
  const linkSha256 = hashOf(token.trim());
  const link = token.trim().startsWith(LINK_PREFIX)
    ? await portalSessionStore.readLink(runtime.store, linkSha256)
    : undefined;
  const nowMs = runtime.clock.nowMs();
  const stored = link ? parseStoredPortalLink(link) : null;
  if (!stored || stored.project_id !== projectId) throw unusableLink();
  identify(stored.team_id);
  if (stored.expires_at_ms <= nowMs) throw unusableLink();
  if (!(await portalSessionStore.takeLink(runtime.store, linkSha256))) throw unusableLink();
  const cookieValue = `${SESSION_PREFIX}${newTokenSecret()}`;
  const session: PortalSession = {
    id: newUlid(nowMs),
    team_id: stored.team_id,
    project_id: projectId,
    subscriber_id: stored.subscriber_id,
    csrf_token: randomBytes(24).toString('base64url'),
    created_at: isoTime(nowMs),
    last_seen_at_ms: nowMs,
  };
  await portalSessionStore.createSession(
    runtime.store,
    hashOf(cookieValue),
    session,
    housekeepingTtl(nowMs + PORTAL_SESSION_IDLE_MS),
  );
  return { cookieValue, session };
}

/**
 * The live portal session of project `projectId` a cookie value names, or null (malformed, unknown, ended,
 * of another project, idle longer than {@link PORTAL_SESSION_IDLE_MS}). Moves its last-seen time forward (at
 * most once a minute). One GetItem, plus one UpdateItem when it touches.
 */
export async function findPortalSession(
  runtime: PortalRuntime,
  projectId: string,
  cookieValue: string | undefined,
): Promise<PortalSession | null> {
  if (!cookieValue?.startsWith(SESSION_PREFIX)) return null;
  const sessionSha256 = hashOf(cookieValue);
  const item = await portalSessionStore.readSession(runtime.store, sessionSha256);
  const session = item ? parseStoredPortalSession(item) : null;
  if (!session || session.project_id !== projectId) return null;
  const nowMs = runtime.clock.nowMs();
  if (nowMs - session.last_seen_at_ms > PORTAL_SESSION_IDLE_MS) return null;
  await touchSession(
    runtime.store,
    portalSessionStore.sessionKey(sessionSha256),
    session,
    nowMs,
    PORTAL_SESSION_IDLE_MS,
  );
  return session;
}

/** Ends the portal session a cookie value names (sign-out): deletes it. Nothing happens for an unknown or ended one. */
export async function endPortalSession(runtime: PortalRuntime, cookieValue: string | undefined): Promise<void> {
  if (!cookieValue?.startsWith(SESSION_PREFIX)) return;
  await portalSessionStore.deleteSession(runtime.store, hashOf(cookieValue));
}

/**
 * The abilities of a subscriber in the portal (DESIGN D27): read its subscriber, subscriptions and payments;
 * cancel and resume its subscriptions (resume needs `project-subscription:pause`; `authorizeOperation` still
 * allows a subscriber only the portal's operations, so it cannot pause).
 */
const SUBSCRIBER_ABILITIES: readonly Ability[] = [
  'project-user:view',
  'project-subscription:view-any',
  'project-subscription:view',
  'project-subscription:cancel',
  'project-subscription:pause',
  'project-payment:view-any',
  'project-payment:view',
];

/**
 * The principal a portal session acts as (DESIGN D27): the subscriber's team, only its project, the portal's
 * abilities, `subscriberId` set (so reads by id of anyone else's data are NOT_FOUND); `tokenId` is
 * `subscriber:<uuid>` (never a token; activity entries name no token or member, surface `portal`).
 */
export function subscriberPrincipal(
  session: Pick<PortalSession, 'team_id' | 'project_id' | 'subscriber_id'>,
): Principal {
  return {
    tokenId: `subscriber:${session.subscriber_id}`,
    teamId: session.team_id,
    subscriberId: session.subscriber_id,
    abilities: new Set(SUBSCRIBER_ABILITIES),
    projectIds: [session.project_id],
    team: null,
  };
}
