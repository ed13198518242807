import type { Principal } from '../../auth/principal.js';
import { webhookEvent, type WebhookEventName } from '../../catalogues/webhook-events.js';
import { ProblemError } from '../../errors.js';

/**
 * The rules of webhook endpoints (interface "Limits", "Subscribing"; DESIGN D6, D8) as constants and
 * pure functions. The signing secret itself is made in `../webhook-deliveries/signing.ts`.
 */

/** A team may register at most this many endpoints (so one fan-out fits one DynamoDB transaction; DESIGN D8). */
export const MAX_ENDPOINTS_PER_TEAM = 50;

/** Attempts in flight at once to one endpoint unless the endpoint says otherwise (DESIGN D24). */
export const DEFAULT_MAX_CONCURRENCY = 5;

/** The highest `max_concurrency` an endpoint may set (DESIGN D24). */
export const MAX_CONCURRENCY_LIMIT = 50;

/**
 * How long a delivery that found its endpoint's cap full waits before it looks again (SECONDS, real
 * time, not scaled; DESIGN D24: "re-queued with a short delay, not counted as an attempt").
 */
export const CAP_FULL_DELAY_SECONDS = 2;

/**
 * Dashboard rotation keeps the previous secret this long (SECONDS; interface "Limits": dual-sign window, DESIGN D8).
 */
const DUAL_SIGNING_WINDOW_SECONDS = 24 * 60 * 60;

/** Consecutive failed attempts (any events) that disable an endpoint (interface "Limits", DESIGN D8). */
export const AUTO_DISABLE_THRESHOLD = 20;

/**
 * The end of a dashboard rotation's dual-signing window: `nowMs` plus {@link DUAL_SIGNING_WINDOW_SECONDS},
 * divided by the local `timeScale` (1 on AWS). Epoch MILLISECONDS.
 */
export function dualSigningExpiresAtMs(nowMs: number, timeScale: number): number {
  return nowMs + (DUAL_SIGNING_WINDOW_SECONDS * 1000) / timeScale;
}

/**
 * Checks that `principal` holds the minimum ability of every event it subscribes to (interface
 * "Subscribing", DESIGN D6). Throws ProblemError TOKEN_MISSING_ABILITY naming each missing one.
 */
export function requireEventAbilities(
  principal: Pick<Principal, 'abilities'>,
  events: readonly WebhookEventName[],
): void {
  const missing = events.filter((name) => !principal.abilities.has(webhookEvent(name).minimum_ability));
  if (missing.length) {
    const detail = missing.map((name) => `${name} needs ${webhookEvent(name).minimum_ability}`).join('; ');
    throw new ProblemError(
      'TOKEN_MISSING_ABILITY',
      `Subscribing to these events needs abilities this token lacks: ${detail}.`,
    );
  }
}
