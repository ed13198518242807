import { createHash } from 'node:crypto';
import { isoTime } from '../clock.js';
import { parseStoredDiscordLinkState } from '../domain/members/record.js';
import { ITEM_EXISTS } from './expressions.js';
import { entity, keys } from './keys.js';
import { ConditionFailedError, type Store } from './store.js';
import { ttlAttribute } from './ttl.js';

/**
 * The store of Discord link attempts (DESIGN D28): one item per OAuth2 `state`, keyed by its SHA-256, bound to the
 * project, subscriber and portal session that started it, used up once by a conditional delete, removed by TTL.
 */

/** How long a used or expired Discord link state item is kept before DynamoDB's TTL removes it, in seconds. */
const LINK_STATE_RETENTION_SECONDS = 24 * 3600;

/** The key of a Discord link state: the SHA-256 (hex) of the OAuth2 `state` (the state itself is never stored). */
const discordLinkStateKey = (state: string) =>
  keys.discordLinkState(createHash('sha256').update(state, 'utf8').digest('hex'));

/** What a Discord link attempt is bound to: its project, subscriber and portal session. */
interface DiscordLinkBinding {
  teamId: string;
  projectId: string;
  subscriberId: string;
  portalSessionId: string;
}

/** Stores a Discord link attempt's `state` (hashed), bound to `binding`, working until `expiresMs` (epoch ms). */
export async function putDiscordLinkState(
  store: Store,
  state: string,
  binding: DiscordLinkBinding,
  expiresMs: number,
): Promise<void> {
  await store.put({
    Item: {
      ...discordLinkStateKey(state),
      entity: entity.discordLinkState,
      team_id: binding.teamId,
      project_id: binding.projectId,
      subscriber_id: binding.subscriberId,
      portal_session_id: binding.portalSessionId,
      link_expires_at: isoTime(expiresMs),
      expires_at: ttlAttribute(expiresMs, LINK_STATE_RETENTION_SECONDS),
    },
  });
}

/**
 * Uses up a Discord link `state` (a conditional delete: once only, unexpired at `nowIso`, same project, subscriber
 * and portal session) and returns its team, or undefined when it is unknown, used, expired or bound otherwise.
 */
export async function consumeDiscordLinkState(
  store: Store,
  state: string,
  binding: Omit<DiscordLinkBinding, 'teamId'>,
  nowIso: string,
): Promise<string | undefined> {
  try {
    const item = await store.delete({
      Key: discordLinkStateKey(state),
      ConditionExpression: `${ITEM_EXISTS} AND project_id = :project AND subscriber_id = :subscriber AND portal_session_id = :session AND link_expires_at > :now`,
      ExpressionAttributeValues: {
        ':project': binding.projectId,
        ':subscriber': binding.subscriberId,
        ':session': binding.portalSessionId,
        ':now': nowIso,
      },
      ReturnValues: 'ALL_OLD',
    });
    return item ? parseStoredDiscordLinkState(item).team_id : undefined;
  } catch (error) {
    if (error instanceof ConditionFailedError) return undefined;
    throw error;
  }
}
