import { randomBytes, timingSafeEqual } from 'node:crypto';
import { newTokenSecret, sha256 } from '../../auth/principal.js';
import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUlid } from '../../ids.js';
import { dashboardSessionStore, signInLinkStore } from '../../store/dashboard-sessions.js';
import type { Store } from '../../store/store.js';
import type { Item } from '../../store/requests.js';
import { touchSession } from '../../auth/idle-sessions.js';
import { keys } from '../../store/keys.js';
import { findMember } from './records.js';
import { findMemberByEmail } from './repository.js';
import { parseStoredDashboardSession, parseStoredSignInLink, type SessionState } from './sign-in-records.js';

/**
 * Dashboard sign-in (DESIGN D21): one-time sign-in links and sessions, stored in DynamoDB. Only the
 * SHA-256 of each credential's secret is stored; the browser holds the credential (`sil_<ULID>_<secret>`
 * in a link, `dss_<ULID>_<secret>` in the session cookie), whose id names its item. Expiry is checked in
 * code (TTL is housekeeping only, DESIGN §3). The items are read and written by the store's adapters.
 */

/** A one-time sign-in link is valid this long (milliseconds): 15 minutes (DESIGN D21). */
export const SIGN_IN_LINK_LIFETIME_MS = 15 * 60 * 1000;
/** A session ends after this long without a request (milliseconds): 12 hours idle (DESIGN D21). */
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;

const LINK_PATTERN = /^sil_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
const SESSION_PATTERN = /^dss_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;

/** A dashboard session as the member sees it in their list (never its secret). */
export interface DashboardSession {
  id: string;
  team_id: string;
  member_id: string;
  state: SessionState;
  /** Random per session; every form and htmx request must echo it (CSRF, DESIGN D21). */
  csrf_token: string;
  /** How the session began: `link` (sign-in link or invitation) or `passkey`. */
  method: 'link' | 'passkey';
  user_agent: string;
  created_at: string;
  /** Epoch milliseconds of the last request. */
  last_seen_at_ms: number;
  revoked_at: string | null;
}

function equalHashes(presented: Buffer, storedHex: unknown): boolean {
  const expected =
    typeof storedHex === 'string' && storedHex.length === 64 ? Buffer.from(storedHex, 'hex') : Buffer.alloc(32);
  return timingSafeEqual(presented, expected) && typeof storedHex === 'string';
}

/**
 * Makes a one-time sign-in link for the invited or active team member with `email` (DESIGN D21: the CLI
 * `member sign-in-link`, `npm start` for the demo owner): valid {@link SIGN_IN_LINK_LIFETIME_MS}, usable
 * once. Returns the path (`/dashboard/sign-in/link?token=...`; the caller prefixes its base URL) and the
 * expiry (ISO). Errors: NOT_FOUND (no such member; a removed member has none), CONFLICT (the member is
 * still invited: the invitation link signs them in).
 */
export async function createSignInLink(
  store: Store,
  clock: Clock,
  teamId: string,
  email: string,
): Promise<{ path: string; expires_at: string; member_id: string }> {
  const member = await findMemberByEmail(store, teamId, email);
  if (!member)
    throw new ProblemError('NOT_FOUND', `No invited or active member with e-mail ${email} in team ${teamId}.`);
  if (member.status !== 'active')
    throw new ProblemError(
      'CONFLICT',
      `Team member ${member.id} is ${member.status}: an invited member signs in by accepting the invitation link first.`,
    );
  const nowMs = clock.nowMs();
  const id = newUlid(nowMs);
  const secret = newTokenSecret();
  const expiresAtMs = nowMs + SIGN_IN_LINK_LIFETIME_MS;
  await signInLinkStore.create(store, {
    id,
    teamId,
    memberId: member.id,
    secretSha256: sha256(secret).toString('hex'),
    expiresAtMs,
  });
  return {
    path: `/dashboard/sign-in/link?token=sil_${id}_${secret}`,
    expires_at: isoTime(expiresAtMs),
    member_id: member.id,
  };
}

const unusableLink = () =>
  new ProblemError(
    'NOT_FOUND',
    'This sign-in link cannot be used: it is unknown, expired or already used. Ask for a new one (`npm run cli -- member sign-in-link`, or restart `npm start` for the demo owner).',
  );

/**
 * Uses a sign-in link once (DESIGN D21): checks its secret in constant time, its expiry and that the
 * member is not removed, and deletes it with a condition on its hash, so two concurrent uses cannot both
 * succeed. Returns the team and member; `identify` learns them as soon as the secret is verified (a refusal after
 * that is the member's to see). Errors: NOT_FOUND (unknown, forged, expired, used; one answer).
 */
export async function consumeSignInLink(
  store: Store,
  clock: Clock,
  token: string,
  identify: (owner: { teamId: string; memberId: string }) => void = () => undefined,
): Promise<{ teamId: string; memberId: string }> {
  const parts = LINK_PATTERN.exec(token.trim());
  const item = parts ? await signInLinkStore.find(store, parts[1]) : undefined;
  const matches = equalHashes(sha256(parts?.[2] ?? token), item?.secret_sha256);
  if (!parts || !item || !matches) throw unusableLink();
  const link = parseStoredSignInLink(item);
  identify({ teamId: link.team_id, memberId: link.member_id });
  if (link.expires_at_ms <= clock.nowMs()) throw unusableLink();
  if (!(await signInLinkStore.consume(store, parts[1], item.secret_sha256 as string))) throw unusableLink();
  const member = await findMember(store, link.team_id, link.member_id);
  if (!member || member.status === 'removed') throw unusableLink();
  return { teamId: link.team_id, memberId: member.id };
}

/** The session of a stored item (throws StoredRecordError when it does not match its record, DESIGN D14). */
function toSession(item: Item): DashboardSession {
  const session = parseStoredDashboardSession(item);
  return {
    id: session.id,
    team_id: session.team_id,
    member_id: session.member_id,
    state: session.state,
    csrf_token: session.csrf_token,
    method: session.method,
    user_agent: session.user_agent ?? '',
    created_at: session.created_at,
    last_seen_at_ms: session.last_seen_at_ms,
    revoked_at: session.revoked_at ?? null,
  };
}

/**
 * Starts a session for a member (after a sign-in link, an accepted invitation or a passkey). Returns the
 * session and the cookie value (`dss_<ULID>_<secret>`, shown only here; the store keeps its SHA-256).
 */
export async function createSession(
  store: Store,
  clock: Clock,
  input: {
    teamId: string;
    memberId: string;
    state: SessionState;
    method: DashboardSession['method'];
    userAgent?: string;
  },
): Promise<{ session: DashboardSession; cookieValue: string }> {
  const nowMs = clock.nowMs();
  const id = newUlid(nowMs);
  const secret = newTokenSecret();
  const session: DashboardSession = {
    id,
    team_id: input.teamId,
    member_id: input.memberId,
    state: input.state,
    csrf_token: randomBytes(24).toString('base64url'),
    method: input.method,
    user_agent: (input.userAgent ?? '').slice(0, 200),
    created_at: isoTime(nowMs),
    last_seen_at_ms: nowMs,
    revoked_at: null,
  };
  await dashboardSessionStore.create(store, session, sha256(secret).toString('hex'), SESSION_IDLE_MS);
  return { session, cookieValue: `dss_${id}_${secret}` };
}

/**
 * The live session a cookie value names, or null (malformed, unknown, wrong secret, revoked, idle longer
 * than {@link SESSION_IDLE_MS}). Moves its last-seen time forward (at most once a minute). One GetItem,
 * plus one UpdateItem when it touches.
 */
export async function findSession(
  store: Store,
  clock: Clock,
  cookieValue: string | undefined,
): Promise<DashboardSession | null> {
  const parts = cookieValue ? SESSION_PATTERN.exec(cookieValue) : null;
  if (!parts) return null;
  const item = await dashboardSessionStore.find(store, parts[1]);
  if (!equalHashes(sha256(parts[2]), item?.secret_sha256) || !item) return null;
  const session = toSession(item);
  const nowMs = clock.nowMs();
  if (session.revoked_at || nowMs - session.last_seen_at_ms > SESSION_IDLE_MS) return null;
  await touchSession(store, keys.dashboardSession(session.id), session, nowMs, SESSION_IDLE_MS, {
    unlessRevoked: true,
  });
  return session;
}

/** The member's sessions that are still live (not revoked, not idle too long), newest first (at most 100). */
export async function listSessions(
  store: Store,
  clock: Clock,
  teamId: string,
  memberId: string,
): Promise<DashboardSession[]> {
  const items = await dashboardSessionStore.listOfMember(store, teamId, memberId);
  const nowMs = clock.nowMs();
  return items
    .map(toSession)
    .filter((session) => !session.revoked_at && nowMs - session.last_seen_at_ms <= SESSION_IDLE_MS);
}
