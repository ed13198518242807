import { ITEM_ABSENT, conditionally, setFields } from './expressions.js';
import { entity, keys, secondaryIndex, sortKeyPrefix, workerIndexShard } from './keys.js';
import { queryPage, type Page } from './pages.js';
import type { Item, Key } from './requests.js';
import { ConditionFailedError, type Store } from './store.js';

/**
 * The message store (DESIGN D32): messages in their subscriber's partition, the occasion markers that make a message
 * at most once per (subscription, kind, occasion, channel), and a subscriber's messaging preferences.
 */

/** Where a message is kept: its team, project, subscriber and id. */
export interface MessageAddress {
  teamId: string;
  projectId: string;
  subscriberId: string;
  messageId: string;
}

/** The key of a message item. */
function messageKey(address: MessageAddress): Key {
  return keys.subscriberMessage(address.teamId, address.projectId, address.subscriberId, address.messageId);
}

const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;

/** The pending-messages index attributes of a message due for an attempt at `dueAtMs` (epoch MILLISECONDS). */
function pendingIndexOf(messageId: string, dueAtMs: number): Item {
  return {
    [INDEX_PK]: keys.pendingMessagesIndex(workerIndexShard(messageId)),
    [INDEX_SK]: keys.timeIndexSortKey(dueAtMs, messageId),
  };
}

/** A message waiting for an attempt, as the pending-messages index gives it to the sweeper. */
export interface PendingMessage extends MessageAddress {
  /** Attempts made so far: the next queue message carries `attempts + 1`. */
  attempts: number;
  /** The index sort key as read: the sweeper's move is guarded on it. */
  indexSortKey: string;
}

/** The preferences a subscriber's messaging has (each a timestamp, ISO, or absent). */
export type MessagePreference = 'opted_out_at' | 'bot_started_at' | 'bot_blocked_at' | 'email_bounced_at';

/**
 * The message store adapter: an occasion's messages, an attempt's begin, finish and deferral, the overdue page of the
 * pending-messages index and its move, a subscriber's list, unsubscribe links and preferences; every method takes the
 * Store port.
 */
export const messageStore = {
  /**
   * Writes the messages of one occasion (their fields, `status` queued or skipped) with the occasion's marker, only if
   * the marker is absent: one transaction. A queued message enters the pending-messages index, due at
   * `next_attempt_at`. True when written, false when the occasion already had its messages.
   */
  async insertOccasion(store: Store, teamId: string, occasionSha256: string, messages: readonly Item[]) {
    if (messages.length === 0) return false;
    const marker = { ...keys.messageOccasion(teamId, occasionSha256), entity: entity.messageOccasion };
    try {
      await store.transactWrite([
        { Put: { Item: marker, ConditionExpression: ITEM_ABSENT } },
        ...messages.map((message) => ({
          Put: {
            Item: {
              ...keys.subscriberMessage(
                teamId,
                message.project_id as string,
                message.subscriber_id as string,
                message.id as string,
              ),
              entity: entity.message,
              team_id: teamId,
              ...message,
              ...(message.status === 'queued'
                ? pendingIndexOf(message.id as string, Date.parse(message.next_attempt_at as string))
                : {}),
            },
          },
        })),
      ]);
      return true;
    } catch (error) {
      if (error instanceof ConditionFailedError) return false;
      throw error;
    }
  },

  /** A message item (strongly consistent), or undefined. */
  async read(store: Store, address: MessageAddress): Promise<Item | undefined> {
    return store.get(messageKey(address));
  },

  /**
   * Takes attempt `attempt` of a queued message: `queued` with `attempts = attempt - 1` → `sending`, out of the
   * pending-messages index (an attempt that crashes is not made again: at most once). Returns the item as it is now,
   * or undefined when the message is not waiting for that attempt (a repeated or stale queue message).
   */
  async begin(store: Store, address: MessageAddress, attempt: number, nowIso: string): Promise<Item | undefined> {
    try {
      return await store.update({
        Key: messageKey(address),
        UpdateExpression:
          'SET #status = :sending, attempts = :attempt, updated_at = :now REMOVE next_attempt_at, #indexPk, #indexSk',
        ConditionExpression: '#status = :queued AND attempts = :previous',
        ExpressionAttributeNames: { '#status': 'status', '#indexPk': INDEX_PK, '#indexSk': INDEX_SK },
        ExpressionAttributeValues: {
          ':sending': 'sending',
          ':queued': 'queued',
          ':attempt': attempt,
          ':previous': attempt - 1,
          ':now': nowIso,
        },
        ReturnValues: 'ALL_NEW',
      });
    } catch (error) {
      if (error instanceof ConditionFailedError) return undefined;
      throw error;
    }
  },

  /**
   * Records how an attempt ended (`sent`, `failed`, `skipped`, or `queued` again with `next_attempt_at`, back in the
   * pending-messages index), only while the message is `sending`. False when it was not.
   */
  async finish(
    store: Store,
    address: MessageAddress,
    outcome: { status: string; nowIso: string; failureReason: string | null; nextAttemptAt?: string; sentAt?: string },
  ): Promise<boolean> {
    const set = setFields({
      status: outcome.status,
      updated_at: outcome.nowIso,
      failure_reason: outcome.failureReason,
      next_attempt_at: outcome.nextAttemptAt ?? null,
      sent_at: outcome.sentAt,
      ...(outcome.status === 'queued' && outcome.nextAttemptAt
        ? pendingIndexOf(address.messageId, Date.parse(outcome.nextAttemptAt))
        : {}),
    });
    return conditionally(
      store.update({
        Key: messageKey(address),
        UpdateExpression: `SET ${set.clause}`,
        ConditionExpression: '#status = :sending',
        ExpressionAttributeNames: set.names,
        ExpressionAttributeValues: { ...set.values, ':sending': 'sending' },
      }),
    );
  },

  /**
   * Puts attempt `attempt` off to `nextAttemptAt` (ISO) without counting it: `sending` with `attempts = attempt` →
   * `queued` with `attempts = attempt - 1` and one deferral more, back in the pending-messages index. Returns the
   * deferrals so far, or null when the message was not taken for that attempt.
   */
  async defer(store: Store, address: MessageAddress, attempt: number, nextAttemptAt: string, nowIso: string) {
    const index = pendingIndexOf(address.messageId, Date.parse(nextAttemptAt));
    try {
      const item = await store.update({
        Key: messageKey(address),
        UpdateExpression:
          'SET #status = :queued, attempts = :previous, next_attempt_at = :next, updated_at = :now, deferrals = if_not_exists(deferrals, :zero) + :one, #indexPk = :indexPk, #indexSk = :indexSk',
        ConditionExpression: '#status = :sending AND attempts = :attempt',
        ExpressionAttributeNames: { '#status': 'status', '#indexPk': INDEX_PK, '#indexSk': INDEX_SK },
        ExpressionAttributeValues: {
          ':queued': 'queued',
          ':sending': 'sending',
          ':attempt': attempt,
          ':previous': attempt - 1,
          ':next': nextAttemptAt,
          ':now': nowIso,
          ':zero': 0,
          ':one': 1,
          ':indexPk': index[INDEX_PK],
          ':indexSk': index[INDEX_SK],
        },
        ReturnValues: 'ALL_NEW',
      });
      return Number(item?.deferrals ?? 1);
    } catch (error) {
      if (error instanceof ConditionFailedError) return null;
      throw error;
    }
  },

  /**
   * One page (≤ `limit`) of shard `shard` of the pending-messages index: messages (of any team) whose attempt was due
   * before `beforeMs` (epoch MILLISECONDS), oldest first.
   */
  async pageOverdue(
    store: Store,
    shard: number,
    beforeMs: number,
    startKey: Key | undefined,
    limit: number,
  ): Promise<{ items: PendingMessage[]; lastEvaluatedKey: Key | undefined }> {
    const result = await store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: `${INDEX_PK} = :index AND ${INDEX_SK} < :limit`,
      ExpressionAttributeValues: {
        ':index': keys.pendingMessagesIndex(shard),
        ':limit': keys.timeIndexSortKey(beforeMs, ''),
      },
      ExclusiveStartKey: startKey,
      Limit: limit,
    });
    const items = result.items.map((item) => ({
      teamId: item.team_id as string,
      projectId: item.project_id as string,
      subscriberId: item.subscriber_id as string,
      messageId: item.id as string,
      attempts: item.attempts as number,
      indexSortKey: item[INDEX_SK] as string,
    }));
    return { items, lastEvaluatedKey: result.lastEvaluatedKey };
  },

  /**
   * Moves a pending message to `toMs` (epoch MILLISECONDS) in the pending-messages index, guarded on the row as read
   * (still queued, same attempts and due time). False when it changed meanwhile.
   */
  moveOverdue(store: Store, pending: PendingMessage, toMs: number): Promise<boolean> {
    return conditionally(
      store.update({
        Key: messageKey(pending),
        UpdateExpression: 'SET #indexSk = :sort',
        ConditionExpression: '#indexSk = :read AND #status = :queued AND attempts = :attempts',
        ExpressionAttributeNames: { '#indexSk': INDEX_SK, '#status': 'status' },
        ExpressionAttributeValues: {
          ':sort': keys.timeIndexSortKey(toMs, pending.messageId),
          ':read': pending.indexSortKey,
          ':queued': 'queued',
          ':attempts': pending.attempts,
        },
      }),
    );
  },

  /** One page of a subscriber's messages, newest first (DESIGN D12). Errors: VALIDATION_FAILED for a foreign cursor. */
  async listPage<T>(
    store: Store,
    teamId: string,
    projectId: string,
    subscriberId: string,
    query: { limit: number; cursor?: string },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    return queryPage(store, {
      partition: keys.subscriberMessagesPartition(teamId, projectId, subscriberId),
      sortKeyPrefix: sortKeyPrefix.subscriberMessage,
      limit: query.limit,
      cursor: query.cursor,
      ascending: false,
      map,
    });
  },

  /** Stores an unsubscribe link under the SHA-256 (hex) of its token; `expiresAtMs` epoch MILLISECONDS. */
  async createUnsubscribeLink(
    store: Store,
    tokenSha256: string,
    link: { teamId: string; projectId: string; subscriberId: string; expiresAtMs: number },
  ): Promise<void> {
    await store.put({
      Item: {
        ...keys.unsubscribeLink(tokenSha256),
        entity: entity.unsubscribeLink,
        team_id: link.teamId,
        project_id: link.projectId,
        subscriber_id: link.subscriberId,
        expires_at_ms: link.expiresAtMs,
        expires_at: Math.ceil(link.expiresAtMs / 1000),
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The unsubscribe link of a token's SHA-256 (hex), or undefined. */
  async readUnsubscribeLink(store: Store, tokenSha256: string): Promise<Item | undefined> {
    return store.get(keys.unsubscribeLink(tokenSha256));
  },

  /** Puts a deadline item (creates it, or moves its due time) outside a unit of work. */
  async putDeadline(store: Store, deadline: Item): Promise<void> {
    await store.put({ Item: deadline });
  },

  /** A subscriber's messaging preferences item (strongly consistent), or undefined when none was ever set. */
  async readPreferences(store: Store, teamId: string, projectId: string, subscriberId: string) {
    return store.get(keys.messagePreferences(teamId, projectId, subscriberId));
  },

  /** Sets (an ISO time) or clears (null) one messaging preference of a subscriber, creating the item when needed. */
  async setPreference(
    store: Store,
    subscriber: { teamId: string; projectId: string; subscriberId: string },
    preference: MessagePreference,
    value: string | null,
  ): Promise<void> {
    await store.update({
      Key: keys.messagePreferences(subscriber.teamId, subscriber.projectId, subscriber.subscriberId),
      UpdateExpression:
        value === null ? 'SET entity = :entity REMOVE #preference' : 'SET entity = :entity, #preference = :value',
      ExpressionAttributeNames: { '#preference': preference },
      ExpressionAttributeValues: {
        ':entity': entity.messagePreferences,
        ...(value === null ? {} : { ':value': value }),
      },
    });
  },
};
