import { createHash, randomBytes } from 'node:crypto';
import { DAY_MS, type Clock } from '../clock.js';
import { Team } from '../domain/teams/schema.js';
import * as z from '../schemas/zod.js';
import { entity } from '../store/keys.js';
import { recordParser } from '../store/records.js';
import type { Store } from '../store/store.js';
import { welcomeLinks } from '../store/welcome-links.js';

/**
 * Welcome links of a free or code join (DESIGN D26): the welcome page shows a subscription only to whoever
 * holds the random token the join answered with — never by a guessable id. The token is stored only as its
 * SHA-256, names one project's subscription, and works for {@link WELCOME_LINK_LIFETIME_MS} (the page polls
 * with it, so it is not single use).
 */

/** A welcome link as stored: the project's subscription it names and when it stops working (epoch MILLISECONDS). */
const StoredWelcomeLink = z.object({
  team_id: Team.shape.id,
  project_id: z.string(),
  subscription_id: z.string(),
  expires_at_ms: z.number(),
  /** Made by a free join before its address was confirmed: the page only says "Check your inbox". */
  awaiting_confirmation: z.optional(z.boolean()),
});

/** Parses a welcome link item; its key (the token's SHA-256) is never named in the error. */
const parseStoredWelcomeLink = recordParser(
  entity.welcomeLink,
  StoredWelcomeLink,
  () => 'welcome link (key: a token’s SHA-256, withheld)',
);

/** How long a welcome link works (24 hours). */
const WELCOME_LINK_LIFETIME_MS = DAY_MS;

const hashOf = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/**
 * Stores a new welcome link for subscription `subscriptionId` of project `projectId` (team `teamId`); returns its
 * token. `awaitingConfirmation`: a free join's before its address is confirmed (it never shows the membership).
 */
export async function createWelcomeLink(
  store: Store,
  clock: Clock,
  link: { teamId: string; projectId: string; subscriptionId: string; awaitingConfirmation?: boolean },
): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await welcomeLinks.create(store, hashOf(token), { ...link, expiresAtMs: clock.nowMs() + WELCOME_LINK_LIFETIME_MS });
  return token;
}

/**
 * The team and subscription a live welcome link of project `projectId` names, and whether it was made before the
 * address was confirmed; null when unknown, expired, another project's or malformed.
 */
export async function findWelcomeLink(
  store: Store,
  clock: Clock,
  projectId: string,
  token: string | null,
): Promise<{ teamId: string; subscriptionId: string; awaitingConfirmation: boolean } | null> {
  if (!token || !/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
  const item = await welcomeLinks.read(store, hashOf(token));
  const link = item ? parseStoredWelcomeLink(item) : null;
  if (!link || link.project_id !== projectId || link.expires_at_ms <= clock.nowMs()) return null;
  return {
    teamId: link.team_id,
    subscriptionId: link.subscription_id,
    awaitingConfirmation: link.awaiting_confirmation === true,
  };
}
