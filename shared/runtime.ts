import type { Clock } from './clock.js';
import type { StoredEvent } from './events/outbox.js';
import type { Store } from './store/store.js';
import type { WebhookTransport } from './domain/webhook-deliveries/transport/port.js';
import type { DeliveryMetrics } from './domain/webhook-deliveries/metrics.js';
import type { IntegrationSettings } from './integrations.js';
import type { MailSender } from './mail/port.js';

/**
 * A queue message of the delivery pipeline. It only says "look at delivery X for attempt N" (or
 * "dead-letter X if it is still waiting after its final attempt"); the delivery row is the source of
 * truth, so a duplicate or stale message does nothing (DESIGN D7).
 */
export interface DeliveryMessage {
  kind: 'attempt' | 'dead_letter';
  team_id: string;
  delivery_id: string;
  /** The attempt number this message is for (1–8); for `dead_letter`, 8. */
  attempt: number;
  /**
   * The delivery's endpoint (a copy of an immutable field of the row, for scheduling only: the local
   * queue keeps at most the default cap of one endpoint's attempts in flight, DESIGN D24). Absent on
   * messages that do not know it (replay jobs); the row stays the source of truth.
   */
  endpoint_id?: string;
  /**
   * What attempt 1 sends, copied by fan-out from the delivery row it just wrote (immutable fields), so
   * the dispatcher takes the lease and the endpoint slot in one transaction without reading the row
   * (2 requests per delivery on the happy path). Absent on other messages (retries,
   * the sweeper's, replays) and when the body is over {@link PREPARED_BODY_MAX_BYTES}; the row stays the
   * source of truth (a message whose lease fails goes the way of a message without it).
   */
  prepared?: PreparedAttempt;
}

/**
 * The most bytes (UTF-8) of a delivery body copied into a queue message: 10 per SQS batch stay far under its 256 KiB.
 */
export const PREPARED_BODY_MAX_BYTES = 16_384;

/** The request attempt 1 of a delivery sends, as its row holds it (see {@link DeliveryMessage.prepared}). */
export interface PreparedAttempt {
  /** The event's id (`evt_…`) and type: the `SVC-Event-Id` and `SVC-Event-Name` headers. */
  event_id: string;
  event_type: string;
  /** The exact POST body (the envelope JSON redacted for the endpoint owner, DESIGN D10). */
  body: string;
  /** When the attempt is due (epoch MILLISECONDS): the attempt record's `planned_at`. */
  due_at_ms: number;
}

/**
 * A queue message that runs the next batch of a replay job (DESIGN D25): the job item is the source of
 * truth (its cursor and counts), so a duplicate or stale message does nothing harmful.
 */
export interface ReplayBatchMessage {
  kind: 'replay_batch';
  team_id: string;
  /** The replay job's id. */
  replay_id: string;
}

/**
 * A queue message that runs the next batch of a broadcast job (DESIGN D32): the job item is the source of truth (its
 * cursor and counts), so a duplicate or stale message does nothing twice.
 */
export interface BroadcastBatchMessage {
  kind: 'broadcast_batch';
  team_id: string;
  project_id: string;
  /** The broadcast job's id. */
  broadcast_id: string;
}

/**
 * A queue message that runs the next Stripe page of an import job (DESIGN D34): the job item is the source of truth
 * (its cursor and counts), so a duplicate or stale message does nothing twice.
 */
export interface ImportPageMessage {
  kind: 'import_page';
  team_id: string;
  project_id: string;
  /** The import job's id. */
  import_id: string;
}

/**
 * A queue message that runs the next page of an access audit (DESIGN D34): the job item is the source of truth (its
 * phase, cursor and counts), so a duplicate or stale message does nothing twice.
 */
export interface AccessAuditPageMessage {
  kind: 'access_audit_page';
  team_id: string;
  project_id: string;
  /** The audit job's id. */
  audit_id: string;
}

/**
 * A queue message that runs an access-code batch job (an MCP task, DESIGN D5, D18): the job item is the source of
 * truth, so a duplicate or stale message does nothing.
 */
export interface AccessCodeBatchMessage {
  kind: 'access_code_batch';
  team_id: string;
  /** The batch job's id. */
  job_id: string;
}

/**
 * A queue message that sends one message to a subscriber (DESIGN D32): attempt N of message `message_id`. The message
 * item is the source of truth, so a duplicate or stale queue message does nothing.
 */
export interface MessageSendMessage {
  kind: 'message_send';
  team_id: string;
  project_id: string;
  subscriber_id: string;
  /** `msg_` + ULID. */
  message_id: string;
  /** The attempt this queue message is for (1 …). */
  attempt: number;
}

/**
 * A message of the delivery queue, which the dispatcher consumes: a delivery's attempt or dead-letter timer, or a
 * replay job's next batch.
 */
export type DeliveryQueueMessage = DeliveryMessage | ReplayBatchMessage;

/**
 * A message of the job queue, which the job worker consumes (DESIGN D7): a message to a subscriber, a broadcast job's
 * next batch, an import job's next page, an access audit's next page, or an access-code batch job.
 */
export type JobMessage =
  MessageSendMessage | BroadcastBatchMessage | ImportPageMessage | AccessAuditPageMessage | AccessCodeBatchMessage;

/** The kinds of {@link JobMessage}; every other kind is a {@link DeliveryQueueMessage}. */
const JOB_MESSAGE_KINDS: ReadonlySet<string> = new Set<JobMessage['kind']>([
  'message_send',
  'broadcast_batch',
  'import_page',
  'access_audit_page',
  'access_code_batch',
]);

/** Whether `message` belongs on the job queue rather than the delivery queue. */
export function isJobMessage(message: PipelineMessage): message is JobMessage {
  return JOB_MESSAGE_KINDS.has(message.kind);
}

/** Any message of the pipeline's two queues. */
export type PipelineMessage = DeliveryQueueMessage | JobMessage;

/**
 * The `DeliveryQueue` port (SQS on AWS, in-process locally): it sends each message to the queue of its kind, the
 * delivery queue or the job queue ({@link isJobMessage}), so a broadcast's backlog never waits in front of a webhook
 * attempt. Messages are grouped by `team_id` (the SQS `MessageGroupId` of a fair queue; the local queue's round
 * robin), so one team's backlog does not delay another team's messages (DESIGN D24).
 */
export interface DeliveryQueue {
  /**
   * Sends messages, each visible after `delaySeconds` (0–900, may be fractional; the SQS adapter rounds up to whole
   * `DelaySeconds`).
   */
  send(messages: readonly PipelineMessage[], delaySeconds: number): Promise<void>;
  /**
   * When the oldest message now waiting to be received (visible, not delayed) was queued, epoch
   * MILLISECONDS, or null when none waits. Only a queue that can tell cheaply has it (the local, in-process
   * one; SQS does not, per call): the sweeper then leaves alone rows due after it, whose messages are
   * still waiting, not lost (DESIGN D7).
   */
  oldestWaitingSinceMs?(): number | null;
}

/** The `RetryScheduler` port (EventBridge Scheduler one-time schedules on AWS, timers locally). */
export interface RetryScheduler {
  /** Delivers `message` to the queue at `atMs` (epoch milliseconds), for waits longer than 15 minutes. */
  schedule(message: DeliveryMessage, atMs: number): Promise<void>;
}

/**
 * Everything the domain needs from its environment (DESIGN §2 ports and adapters). Lambda handlers
 * build it from environment variables (`shared/aws/runtime.ts`); the local server and tests build it
 * with DynamoDB Local and in-process adapters (`shared/local/runtime.ts`).
 */
export interface Runtime {
  store: Store;
  clock: Clock;
  deliveryQueue: DeliveryQueue;
  retryScheduler: RetryScheduler;
  transport: WebhookTransport;
  /**
   * Called after a transaction that wrote outbox events committed, with those events. On AWS a no-op
   * (DynamoDB Streams drive fan-out); locally it fans them out (without them, it wakes the outbox relay).
   */
  eventsCommitted(events?: readonly StoredEvent[]): void;
  /**
   * Divides retry waits, the 72-hour dead-letter timer and the 24-hour dual-signing window
   * (local runtime only, `TIME_SCALE`; always 1 on AWS).
   */
  timeScale: number;
  /**
   * Settings of the integrations (credential key, Telegram API root, public base URL, provider retries;
   * DESIGN D16, D22). Absent: read from the environment (`integrationsFromEnvironment`).
   */
  integrations?: IntegrationSettings;
  /**
   * Delivery metrics (DESIGN D23): the dispatcher Lambda's runtime has them (CloudWatch EMF through
   * Powertools, flushed per invocation); absent locally and in tests, where nothing is reported.
   */
  metrics?: DeliveryMetrics;
  /**
   * Sends the messages' e-mail (DESIGN D32). Absent: built from the environment by `mailSenderFromEnvironment`
   * (`shared/mail/`): SES on AWS, `SMTP_URL` elsewhere.
   */
  mail?: MailSender;
  /**
   * Whether the service's own outbound fetches (OAuth Client ID Metadata Documents, DESIGN D30) may reach non-public
   * addresses and loopback `http`, as the webhook transport's option of the same name (D9): local runs and tests only.
   * Absent: false.
   */
  allowPrivateTargets?: boolean;
}

/**
 * A runtime that writes to `store` on `clock` and sends nothing (no delivery, retry or webhook request; `sender` names
 * who in the error a send throws): the events it commits wait in the outbox for the running service's relay.
 */
export function storeOnlyRuntime(store: Store, clock: Clock, sender: string): Runtime {
  const none = () => {
    throw new Error(`${sender} sends no messages and schedules nothing.`);
  };
  return {
    store,
    clock,
    eventsCommitted: () => undefined,
    timeScale: 1,
    deliveryQueue: { send: none },
    retryScheduler: { schedule: none },
    transport: { send: none },
  };
}
