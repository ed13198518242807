import { ITEM_ABSENT } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Store } from './store.js';

/**
 * The tool server's sessions (DESIGN D5): one item per session in its token's partition (`keys.session`), so one
 * BatchGet reads it with the token; `expires_at` (epoch seconds) is also the TTL attribute.
 */

/** A tool-server session as first written; times in epoch SECONDS. */
interface NewMcpSession {
  tokenId: string;
  sessionId: string;
  teamId: string;
  protocolVersion: string;
  createdAt: number;
  expiresAt: number;
}

/** The tool-server sessions' adapter: store a new session, delete one. */
export const mcpSessions = {
  /** Stores a new session (one PutItem, only if absent: an id already stored throws ConditionFailedError). */
  async create(store: Store, session: NewMcpSession): Promise<void> {
    await store.put({
      Item: {
        ...keys.session(session.tokenId, session.sessionId),
        entity: entity.mcpSession,
        team_id: session.teamId,
        token_id: session.tokenId,
        protocol_version: session.protocolVersion,
        created_at: session.createdAt,
        expires_at: session.expiresAt,
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** Deletes session `sessionId` of token `tokenId` (one DeleteItem; none stored: nothing happens). */
  async delete(store: Store, tokenId: string, sessionId: string): Promise<void> {
    await store.delete({ Key: keys.session(tokenId, sessionId) });
  },
};
