/**
 * Tool-server sessions (DESIGN D5): the item in its token's partition, read with the token at authentication,
 * stored at `initialize` and deleted on `DELETE`; the only module that uses them (stored by `store/mcp-sessions.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { Runtime } from '../runtime.js';
import * as z from '../schemas/zod.js';
import { recordParser } from '../store/records.js';
import { entity, keys } from '../store/keys.js';
import { mcpSessions } from '../store/mcp-sessions.js';
import type { Item, Key } from '../store/requests.js';
import { ConditionFailedError } from '../store/store.js';

/** Sessions end 24 hours after `initialize` (seconds); checked in code, TTL only cleans up. */
export const MCP_SESSION_LIFETIME_SECONDS = 24 * 60 * 60;

/** A stored tool-server session (key: {@link keys.session}); `expires_at` in epoch seconds. */
const SessionItem = z.object({
  team_id: z.string(),
  token_id: z.string(),
  /** The protocol version negotiated at `initialize` (absent on sessions stored before it was kept). */
  protocol_version: z.optional(z.string()),
  expires_at: z.number(),
});
const parseSession = recordParser(entity.mcpSession, SessionItem);

/** The shape of every session id this server hands out: a random (v4) UUID, lower case. */
const SESSION_ID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * True when an `MCP-Session-Id` value could be a session of this server (a v4 UUID as
 * {@link createSession} makes them). Anything else — over-long, malformed, another server's format — is
 * never looked up: it is simply not a live session (404), never a store error (DESIGN D5).
 */
export function isSessionId(value: string): boolean {
  return value.length === 36 && SESSION_ID_PATTERN.test(value);
}

/**
 * The items `authenticateRequest` reads with the token (its `alsoRead`): the session `sessionId` names in
 * the token's partition, so one BatchGet reads both; none when the request names no usable session id.
 */
export function sessionKeysToRead(tokenId: string, sessionId: string | null): Key[] {
  return sessionId ? [keys.session(tokenId, sessionId)] : [];
}

/**
 * The session among the items read with the token when it is still live at `nowMs` (epoch ms; see {@link
 * MCP_SESSION_LIFETIME_SECONDS}), else null.
 */
export function liveSessionOf(items: readonly Item[], nowMs: number): z.output<typeof SessionItem> | null {
  const session = items[0] ? parseSession(items[0]) : null;
  return session && session.expires_at > nowMs / 1000 ? session : null;
}

/** Ends the session `sessionId` of the token `tokenId` (`DELETE` of a live session; DESIGN D5). */
export async function deleteSession(runtime: Runtime, tokenId: string, sessionId: string): Promise<void> {
  await mcpSessions.delete(runtime.store, tokenId, sessionId);
}

/**
 * Stores a new tool-server session (DESIGN D5): a random UUID in the token's partition (so only that
 * token finds it), with the negotiated protocol version and `expires_at` = now +
 * {@link MCP_SESSION_LIFETIME_SECONDS} (epoch seconds; also the TTL attribute). Returns the id.
 */
export async function createSession(runtime: Runtime, principal: Principal, protocolVersion: string): Promise<string> {
  const sessionId = randomUUID();
  const nowSeconds = Math.floor(runtime.clock.nowMs() / 1000);
  try {
    await mcpSessions.create(runtime.store, {
      tokenId: principal.tokenId,
      sessionId,
      teamId: principal.teamId,
      protocolVersion,
      createdAt: nowSeconds,
      expiresAt: nowSeconds + MCP_SESSION_LIFETIME_SECONDS,
    });
  } catch (error) {
    if (error instanceof ConditionFailedError) throw new Error('session id collision', { cause: error });
    throw error;
  }
  return sessionId;
}
