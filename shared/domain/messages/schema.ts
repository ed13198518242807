import * as z from '../../schemas/zod.js';
import { MESSAGE_CHANNELS, MESSAGE_KIND_VALUES } from '../../catalogues/message-kinds.js';
import { listOf, ListQuery, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * Message shapes (DESIGN D12, D32): one message to one subscriber through one channel, as the log returns it. A
 * message never carries its text or a link's token: the log says what was sent, when and how it went.
 */

/**
 * Where a message stands: `queued` (waiting for its attempt), `sending` (an attempt in flight), `sent` (the channel
 * accepted it), `failed` (retries exhausted, or refused for good: a blocked bot, a bounced address), `skipped` (not
 * sent: the subscriber opted out, or has no way to be reached any more).
 */
const MESSAGE_STATUSES = ['queued', 'sending', 'sent', 'failed', 'skipped'] as const;

/** A message to a subscriber, as the log returns it. */
export const Message = z
  .object({
    id: z.string().check(z.describe('`msg_` + ULID.')),
    project_id: Uuid,
    subscriber_id: Uuid,
    subscription_id: z.nullable(Uuid).check(z.describe('The subscription it is about; null for sign-in links.')),
    broadcast_id: z.nullable(Uuid).check(z.describe('The broadcast it belongs to, or null.')),
    kind: z.enum(MESSAGE_KIND_VALUES).check(z.describe('See service://enums/message-kind.')),
    channel: z.enum(MESSAGE_CHANNELS),
    status: z.enum(MESSAGE_STATUSES),
    attempts: z.number().check(z.int(), z.nonnegative(), z.describe('Attempts made so far.')),
    failure_reason: z
      .nullable(z.string())
      .check(z.describe('Why it failed or was skipped (no addresses, no tokens); null otherwise.')),
    next_attempt_at: z.nullable(Timestamp).check(z.describe('When a queued message is tried next; null otherwise.')),
    sent_at: z.nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Message' });
/** A message (see {@link Message}). */
export type Message = z.infer<typeof Message>;

/** A page of messages. */
export const MessageList = listOf(Message, 'MessageList');

/** `{project_id}` path parameters of the messages list. */
export const MessageProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project the messages belong to.')),
});

/** Query of `GET /v1/projects/{project_id}/messages`: one subscriber's messages, newest first. */
export const ListMessagesQuery = z.extend(ListQuery, {
  subscriber_id: Uuid.check(z.describe('The subscriber whose messages to list.')),
});
/** A validated messages query (see {@link ListMessagesQuery}). */
export type ListMessagesQuery = z.infer<typeof ListMessagesQuery>;
