import type { Clock } from '../clock.js';
import { isoTime } from '../clock.js';
import { ProblemError } from '../errors.js';
import type { DashboardSession } from '../domain/team-members/sessions.js';
import { conditionally, ITEM_ABSENT, ITEM_EXISTS } from './expressions.js';
import { entity, keys, secondaryIndex } from './keys.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import { housekeepingTtl } from './ttl.js';

/**
 * The dashboard's sign-in items (DESIGN D21, D35): one-time sign-in links and sessions, each keyed by the id inside its
 * credential; only the SHA-256 (hex) of a credential's secret is stored. The domain (`team-members/sessions.ts`)
 * checks secrets and expiry; these adapters read and write the items.
 */

/** Stores, reads and uses up one-time sign-in links. */
export const signInLinkStore = {
  /** Stores a new link (a conditional PutItem that never overwrites); TTL a day after `expiresAtMs` (epoch ms). */
  async create(
    store: Store,
    link: { id: string; teamId: string; memberId: string; secretSha256: string; expiresAtMs: number },
  ): Promise<void> {
    await store.put({
      Item: {
        ...keys.signInLink(link.id),
        entity: entity.signInLink,
        id: link.id,
        team_id: link.teamId,
        member_id: link.memberId,
        secret_sha256: link.secretSha256,
        expires_at_ms: link.expiresAtMs,
        expires_at: housekeepingTtl(link.expiresAtMs),
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The stored link `id` as an item (its hash included, for the caller's constant-time check), or undefined. */
  find(store: Store, id: string): Promise<Item | undefined> {
    return store.get(keys.signInLink(id));
  },

  /** Deletes link `id` while its hash is still `secretSha256`: false when another use deleted it first. */
  consume(store: Store, id: string, secretSha256: string): Promise<boolean> {
    return conditionally(
      store.delete({
        Key: keys.signInLink(id),
        ConditionExpression: 'secret_sha256 = :hash',
        ExpressionAttributeValues: { ':hash': secretSha256 },
      }),
    );
  },
};

/** One member's session: the session id and the team and member it must belong to. */
interface MemberSession {
  teamId: string;
  memberId: string;
  sessionId: string;
}

/** Condition: the session exists and belongs to `:team`'s member `:member` ({@link ownSessionValues}). */
const OWN_SESSION = `${ITEM_EXISTS} AND team_id = :team AND member_id = :member`;
const ownSessionValues = (session: MemberSession) => ({ ':team': session.teamId, ':member': session.memberId });
/** A session of anyone else, or none (one answer for both). */
const noSuchSession = (session: MemberSession) => new ProblemError('NOT_FOUND', `No session ${session.sessionId}.`);

/** Stores, reads, activates, lists and revokes dashboard sessions. */
export const dashboardSessionStore = {
  /**
   * Stores a new session (a conditional PutItem) with its secret's hash, in its member's sessions on the GSI; TTL a
   * day after `idleMs` (milliseconds) from its creation.
   */
  async create(store: Store, session: DashboardSession, secretSha256: string, idleMs: number): Promise<void> {
    await store.put({
      Item: {
        ...keys.dashboardSession(session.id),
        entity: entity.dashboardSession,
        [secondaryIndex.partitionKey]: keys.memberSessionsIndex(session.team_id, session.member_id),
        [secondaryIndex.sortKey]: session.id,
        ...session,
        revoked_at: undefined,
        secret_sha256: secretSha256,
        expires_at: housekeepingTtl(session.last_seen_at_ms + idleMs),
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The stored session `id` as an item (its hash included, for the caller's constant-time check), or undefined. */
  find(store: Store, id: string): Promise<Item | undefined> {
    return store.get(keys.dashboardSession(id));
  },

  /**
   * Marks member `memberId`'s session `sessionId` of `teamId` `active` (its member registered a passkey). A revoked
   * session, or one of anyone else: NOT_FOUND.
   */
  async activate(store: Store, session: MemberSession): Promise<void> {
    const activated = await conditionally(
      store.update({
        Key: keys.dashboardSession(session.sessionId),
        UpdateExpression: 'SET #state = :active',
        ConditionExpression: `${OWN_SESSION} AND attribute_not_exists(revoked_at)`,
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':active': 'active', ...ownSessionValues(session) },
      }),
    );
    if (!activated) throw noSuchSession(session);
  },

  /** Member `memberId`'s sessions of `teamId` as items, newest first, at most 100 (one Query on the GSI). */
  async listOfMember(store: Store, teamId: string, memberId: string): Promise<Item[]> {
    const result = await store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': secondaryIndex.partitionKey },
      ExpressionAttributeValues: { ':pk': keys.memberSessionsIndex(teamId, memberId) },
      ScanIndexForward: false,
      Limit: 100,
    });
    return result.items;
  },

  /**
   * Revokes session `sessionId` of member `memberId` of `teamId` (one conditional UpdateItem; revoking twice keeps
   * the first time). A session of anyone else, or none: NOT_FOUND.
   */
  async revoke(store: Store, clock: Clock, session: MemberSession): Promise<void> {
    const revoked = await conditionally(
      store.update({
        Key: keys.dashboardSession(session.sessionId),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: OWN_SESSION,
        ExpressionAttributeValues: { ':now': isoTime(clock.nowMs()), ...ownSessionValues(session) },
      }),
    );
    if (!revoked) throw noSuchSession(session);
  },
};
