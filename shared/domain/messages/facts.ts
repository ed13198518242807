import { defineFacts } from '../define-facts.js';

/**
 * Messages' keys (DESIGN D32; no abilities of their own: the interface fixes the catalogue, so the log needs
 * `project-user:view-any`). A subscriber's messages and messaging preferences share one partition
 * (`…#SUBSCRIBER_MESSAGES#<subscriber>`): the log is one Query, newest first by `MESSAGE#<msg_ ULID>`. Each occasion
 * (subscription, kind, occasion, channel) has a marker item of its own, written with the message in one transaction
 * only if absent: a message is made at most once per occasion, whoever tries. A project's broadcast jobs and their
 * list entries share the project's broadcasts partition.
 */
export const messagesFacts = defineFacts({
  keys: {
    /** One message in its subscriber's partition (ULID order). */
    subscriberMessage: (teamId: string, projectId: string, subscriberId: string, messageId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_MESSAGES#${subscriberId}`,
      sk: `MESSAGE#${messageId}`,
    }),
    /** Partition of a subscriber's messages and preferences. */
    subscriberMessagesPartition: (teamId: string, projectId: string, subscriberId: string) =>
      `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_MESSAGES#${subscriberId}`,
    /** A subscriber's messaging preferences: opt-out, bot reachability, bounces. */
    messagePreferences: (teamId: string, projectId: string, subscriberId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_MESSAGES#${subscriberId}`,
      sk: 'PREFERENCES',
    }),
    /** The marker that a message was made for an occasion (its SHA-256 hex identity). */
    messageOccasion: (teamId: string, occasionSha256: string) => ({
      pk: `TEAM#${teamId}#MESSAGE_OCCASION#${occasionSha256}`,
      sk: 'OCCASION',
    }),
    /** A one-click unsubscribe link, keyed by the SHA-256 (hex) of its token. */
    unsubscribeLink: (tokenSha256Hex: string) => ({ pk: `UNSUBSCRIBE_LINK#${tokenSha256Hex}`, sk: 'UNSUBSCRIBE_LINK' }),
    /** A broadcast job in its project's broadcasts partition. */
    broadcast: (teamId: string, projectId: string, broadcastId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#BROADCASTS`,
      sk: `BROADCAST#${broadcastId}`,
    }),
    /** A broadcast's place in its project's list, newest first by creation time (then id). */
    broadcastListEntry: (teamId: string, projectId: string, createdAtIso: string, broadcastId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#BROADCASTS`,
      sk: `BROADCAST_AT#${createdAtIso}#${broadcastId}`,
    }),
    /** Partition of a project's broadcasts and their list entries. */
    broadcastsPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#BROADCASTS`,
    /** Sparse GSI partition of broadcasts still running (the sweeper restarts a stalled one). */
    runningBroadcastsIndex: 'BROADCAST_RUNNING',
    /**
     * Sparse GSI partition (one of the worker-index shards) of messages waiting for an attempt: the sweeper re-queues
     * one whose queue message was lost. Sort key: the time index sort key of the attempt's due time and the id.
     */
    pendingMessagesIndex: (shard: number) => `MESSAGE_PENDING#${String(shard).padStart(2, '0')}`,
  },
  sortKeyPrefix: { subscriberMessage: 'MESSAGE#', broadcastListEntry: 'BROADCAST_AT#' },
  entity: {
    message: 'message',
    messagePreferences: 'message_preferences',
    messageOccasion: 'message_occasion',
    unsubscribeLink: 'unsubscribe_link',
    broadcast: 'broadcast',
    broadcastListEntry: 'broadcast_list_entry',
  },
});
