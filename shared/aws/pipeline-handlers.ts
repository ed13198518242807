import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { Context, DynamoDBRecord, DynamoDBStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import { PREPARED_BODY_MAX_BYTES, type PipelineMessage, type Runtime } from '../runtime.js';
import { processDeliveryMessage } from '../domain/webhook-deliveries/dispatcher.js';
import { fanOutEvent } from '../domain/webhook-deliveries/fan-out.js';
import { sweep } from '../domain/webhook-deliveries/sweeper.js';
import type { StoredEvent } from '../events/outbox.js';
import { logger } from '../logger.js';

/** Schema of a delivery-queue message body (see `PipelineMessage`: a delivery message or a replay job's next batch). */
const DeliveryMessageSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.enum(['attempt', 'dead_letter']),
    team_id: z.uuid(),
    delivery_id: z.string().regex(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/),
    attempt: z.number().int().min(1).max(8),
    endpoint_id: z.uuid().optional(),
    prepared: z
      .object({ event_id: z.string().min(1), event_type: z.string().min(1), body: z.string().max(PREPARED_BODY_MAX_BYTES), due_at_ms: z.number().int().nonnegative() })
      .optional(),
  }),
  z.object({ kind: z.literal('replay_batch'), team_id: z.uuid(), replay_id: z.uuid() }),
]);

/**
 * The dispatcher Lambda (SQS event source with partial batch responses, Powertools batch): each record
 * is one delivery message. A malformed body is logged and dropped (it can never succeed; poison
 * messages that keep throwing end in the queue's own dead-letter queue after maxReceiveCount).
 */
export function createDispatcherHandler(getRuntime: () => Runtime) {
  const processor = new BatchProcessor(EventType.SQS);
  const recordHandler = async (record: SQSRecord) => {
    let body: unknown;
    try {
      body = JSON.parse(record.body);
    } catch {
      body = null;
    }
    const message = DeliveryMessageSchema.safeParse(body);
    if (!message.success) {
      logger.error('dropping malformed delivery message', { message_id: record.messageId });
      return;
    }
    const outcome = await processDeliveryMessage(getRuntime(), message.data);
    // Never the body a message may carry: payloads hold subscriber data.
    const { prepared, ...named } = message.data as PipelineMessage & { prepared?: unknown };
    logger.info('delivery message processed', { ...named, carried_body: prepared !== undefined, outcome });
  };
  return async (event: SQSEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

/**
 * The fan-out Lambda (DynamoDB Streams on the main table, filtered to INSERTs of outbox events):
 * fans each event out once (DESIGN D6); failures are reported per record (partial batch response).
 */
export function createFanOutHandler(getRuntime: () => Runtime) {
  const processor = new BatchProcessor(EventType.DynamoDBStreams);
  const recordHandler = async (record: DynamoDBRecord) => {
    const image = record.dynamodb?.NewImage;
    if (record.eventName !== 'INSERT' || !image) return;
    const item = unmarshall(image as Record<string, AttributeValue>);
    if (item.entity !== 'event' || item.fanned_out_at) return;
    await fanOutEvent(getRuntime(), item as StoredEvent);
  };
  return async (event: DynamoDBStreamEvent, context: Context) => processPartialResponse(event, recordHandler, processor, { context });
}

/** The sweeper Lambda (every 5 minutes): re-queues deliveries whose timer was lost (DESIGN D7). */
export function createSweeperHandler(getRuntime: () => Runtime) {
  return async () => {
    const result = await sweep(getRuntime());
    logger.info('sweep', { ...result });
    return result;
  };
}
