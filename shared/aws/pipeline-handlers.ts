import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type {
  Context,
  DynamoDBBatchResponse,
  DynamoDBRecord,
  DynamoDBStreamEvent,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import pMap from 'p-map';
import * as z from '../schemas/zod.js';
import {
  isJobMessage,
  PREPARED_BODY_MAX_BYTES,
  type DeliveryQueueMessage,
  type PipelineMessage,
  type Runtime,
} from '../runtime.js';
import { processDeliveryMessage } from '../domain/webhook-deliveries/dispatcher.js';
import { processJobMessage } from '../domain/job-worker.js';
import { parseStoredEvent } from '../domain/events/record.js';
import { fanOutEvents } from '../domain/webhook-deliveries/fan-out.js';
import { sweep } from '../domain/webhook-deliveries/sweeper.js';
import type { StoredEvent } from '../events/outbox.js';
import { logger } from '../logger.js';
import { entity } from '../store/keys.js';

/**
 * Schema of a message body of either queue (see `PipelineMessage`: a delivery message, a replay's next batch, a job's
 * next batch or page, a message to send).
 */
const PipelineMessageSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.enum(['attempt', 'dead_letter']),
    team_id: z.uuid(),
    delivery_id: z.string().check(z.regex(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/)),
    attempt: z.number().check(z.int(), z.gte(1), z.lte(8)),
    endpoint_id: z.optional(z.uuid()),
    prepared: z.optional(
      z.object({
        event_id: z.string().check(z.minLength(1)),
        event_type: z.string().check(z.minLength(1)),
        body: z.string().check(z.maxLength(PREPARED_BODY_MAX_BYTES)),
        due_at_ms: z.number().check(z.int(), z.nonnegative()),
      }),
    ),
  }),
  z.object({ kind: z.literal('replay_batch'), team_id: z.uuid(), replay_id: z.uuid() }),
  z.object({ kind: z.literal('broadcast_batch'), team_id: z.uuid(), project_id: z.uuid(), broadcast_id: z.uuid() }),
  z.object({ kind: z.literal('import_page'), team_id: z.uuid(), project_id: z.uuid(), import_id: z.uuid() }),
  z.object({ kind: z.literal('access_audit_page'), team_id: z.uuid(), project_id: z.uuid(), audit_id: z.uuid() }),
  z.object({ kind: z.literal('access_code_batch'), team_id: z.uuid(), job_id: z.uuid() }),
  z.object({
    kind: z.literal('message_send'),
    team_id: z.uuid(),
    project_id: z.uuid(),
    subscriber_id: z.uuid(),
    message_id: z.string().check(z.regex(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/)),
    attempt: z.number().check(z.int(), z.gte(1), z.lte(10)),
  }),
]);

/**
 * An SQS handler (partial batch responses, Powertools batch) of one queue of the pipeline: each record is one message;
 * `process` handles the messages `accepts` takes. A message of the other queue (sent before a deploy split the queues)
 * is forwarded to it through the runtime's queue, which routes by kind. A malformed body is logged and dropped (it can
 * never succeed; poison messages that keep throwing end in the queue's own dead-letter queue after maxReceiveCount).
 */
function createQueueHandler<Message extends PipelineMessage>(
  getRuntime: () => Runtime,
  accepts: (message: PipelineMessage) => message is Message,
  process: (runtime: Runtime, message: Message) => Promise<string>,
) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord) => {
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch {
      body = null;
    }
    const parsed = PipelineMessageSchema.safeParse(body);
    if (!parsed.success) {
      logger.error('dropping malformed pipeline message', { message_id: record.messageId });
      return;
    }
    const message: PipelineMessage = parsed.data;
    const outcome = accepts(message)
      ? await process(getRuntime(), message)
      : await getRuntime()
          .deliveryQueue.send([message], 0)
          .then(() => 'forwarded');
    // Never the body a message may carry: payloads hold subscriber data.
    const { prepared, ...named } = message as PipelineMessage & { prepared?: unknown };
    logger.info('pipeline message processed', { ...named, carried_body: prepared !== undefined, outcome });
  };
  return async (event: SQSEvent, context: Context) =>
    processPartialResponse(event, recordHandler, processor, { context });
}

/** The dispatcher Lambda: the delivery queue's messages (attempts, dead-letter timers, replay batches; DESIGN D7). */
export function createDispatcherHandler(getRuntime: () => Runtime) {
  return createQueueHandler(
    getRuntime,
    (message): message is DeliveryQueueMessage => !isJobMessage(message),
    processDeliveryMessage,
  );
}

/** The job worker Lambda: the job queue's messages (messages to send, broadcasts, imports, audits, code batches). */
export function createJobWorkerHandler(getRuntime: () => Runtime) {
  return createQueueHandler(getRuntime, isJobMessage, processJobMessage);
}

/** How many teams of one stream batch are fanned out at once (each team: 3 requests in a row, DESIGN D6). */
const FAN_OUT_TEAM_CONCURRENCY = 4;

/**
 * Fan-out Lambda (DynamoDB Streams, D6, D14): fans out `INSERT`ed outbox events not yet fanned out, one {@link
 * fanOutEvents} per team; ignores the rest. Returns `batchItemFailures` (a failed team's records; retries repeat later
 * records, which is safe: fan-out is idempotent). Throws when a failure has no sequence number.
 */
export function createFanOutHandler(getRuntime: () => Runtime) {
  return async (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> => {
    const failed: string[] = [];
    const teams = new Map<string, { events: StoredEvent[]; sequenceNumbers: string[] }>();
    for (const record of event.Records) {
      const image = record.dynamodb?.NewImage;
      if (record.eventName !== 'INSERT' || !image) continue;
      let item: Record<string, unknown>;
      try {
        item = unmarshall(image as Record<string, AttributeValue>);
      } catch {
        logger.error('fan-out record image unreadable', { sequence_number: record.dynamodb?.SequenceNumber });
        failed.push(sequenceNumberOf(record));
        continue;
      }
      if (item.entity !== entity.event || item.fanned_out_at) continue;
      let stored: StoredEvent;
      try {
        stored = parseStoredEvent(item);
      } catch (error) {
        // A StoredRecordError names the item's key and the failing attribute paths, never a value.
        logger.error('fan-out record image does not match the event record schema', {
          sequence_number: record.dynamodb?.SequenceNumber,
          error: error as Error,
        });
        failed.push(sequenceNumberOf(record));
        continue;
      }
      const team = teams.get(stored.team_id) ?? { events: [], sequenceNumbers: [] };
      team.events.push(stored);
      team.sequenceNumbers.push(sequenceNumberOf(record));
      teams.set(stored.team_id, team);
    }
    const runtime = getRuntime();
    const failedTeams = await pMap(
      teams,
      async ([teamId, { events, sequenceNumbers }]) => {
        try {
          await fanOutEvents(runtime, events);
          return [];
        } catch (error) {
          logger.error('fan-out failed for a team; its records are reported for retry', {
            team_id: teamId,
            events: events.length,
            error: error as Error,
          });
          return sequenceNumbers;
        }
      },
      { concurrency: FAN_OUT_TEAM_CONCURRENCY },
    );
    failed.push(...failedTeams.flat());
    if (failed.includes(''))
      throw new Error('A failed fan-out stream record has no sequence number; the whole batch is retried.');
    return { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

/** A stream record's `dynamodb.SequenceNumber` (its partial-batch-response `itemIdentifier`), or '' when absent. */
function sequenceNumberOf(record: DynamoDBRecord): string {
  return record.dynamodb?.SequenceNumber ?? '';
}

/** The sweeper Lambda (every 5 minutes): re-queues deliveries whose timer was lost (DESIGN D7). */
export function createSweeperHandler(getRuntime: () => Runtime) {
  return async () => {
    const result = await sweep(getRuntime());
    logger.info('sweep', { ...result });
    return result;
  };
}
