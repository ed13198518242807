/**
 * Benchmark 3: replay-dead of 10,000 dead deliveries as a job (DESIGN D7, D25): the time to the `202`
 * (`createReplayJob`: the job, its `matched` count and its first batch message) and the time until the job has replayed
 * everything (its batch messages run one after another, as the background worker does). The dead deliveries are seeded
 * straight into fresh tables with BatchWriteItem, in exactly the shapes that
 * `shared/domain/webhook-deliveries/dead-letter.ts` leaves after the 72-hour dead-letter timer (`markDead`): the
 * delivery row in the main table and its copy in the dead-letter table. The runtime is built by hand; its queue only
 * counts messages.
 *
 * @module
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { Principal } from '../shared/auth/principal.js';
import { ABILITY_VALUES } from '../shared/catalogues/abilities.js';
import { HOUR_MS, isoTime, systemClock } from '../shared/clock.js';
import { newDeliveryId, newEventId } from '../shared/ids.js';
import type { DeliveryMessage, PipelineMessage, ReplayBatchMessage, Runtime } from '../shared/runtime.js';
import { createTables } from '../shared/store/create-tables.js';
import { localDynamoDbClient } from '../shared/store/dynamodb-local.js';
import { keys, sortKeyPrefix } from '../shared/store/keys.js';
import { createStore, type Store } from '../shared/store/store.js';
import { processDeliveryMessage } from '../shared/domain/webhook-deliveries/dispatcher.js';
import { ReplayDeadRequest } from '../shared/domain/webhook-deliveries/schema.js';
import { createReplayJob, getReplayJob } from '../shared/domain/webhook-replays/repository.js';
import { MAX_ATTEMPTS, RETRY_WAIT_SECONDS } from '../shared/domain/webhook-deliveries/policy.js';
import type { DeliveryAttemptRecord } from '../shared/domain/webhook-deliveries/schema.js';
import type { WebhookTransport } from '../shared/domain/webhook-deliveries/transport/port.js';
import { batchWrite, type RecordedPut } from './seeding.js';
import { attachRequestCounter } from './support.js';

/** Deliveries and dead-letter copies are kept 30 days (the retention `webhook-deliveries/policy.ts` sets). */
const RETENTION_SECONDS = 30 * 24 * 3_600;

/** Figures of the replay run. */
export interface ReplayResult {
  seeded: number;
  seedSeconds: number;
  sinceHours: number;
  /** Seconds from the request to the `202` with the job (matched counted, first batch queued). */
  secondsTo202: number;
  /** Seconds from the request until the job has replayed everything. */
  seconds: number;
  /** The job's `matched` when it was created. */
  matched: number;
  /** DynamoDB commands made by the job, creation and batches (one per `send`). */
  dynamoDbRequests: number;
  /** HTTP attempts to DynamoDB (SDK retries included). */
  dynamoDbAttempts: number;
  byCommand: Record<string, number>;
  /** The finished job's `replayed`. */
  replayed: number;
  /** Messages the queue received, its `send` calls, and distinct delivery ids among them. */
  queueMessages: number;
  queueSends: number;
  distinctQueuedDeliveries: number;
  /** Dead-letter copies of the team left after the replay (must be 0). */
  deadLetterLeft: number;
  /** Main-table deliveries of the team now `pending` with attempts 0 (must equal `seeded`). */
  pendingAfter: number;
}

/** The main-table row and the dead-letter copy of one dead delivery, as `markDead` writes them. */
function deadDeliveryItems(
  teamId: string,
  endpointId: string,
  deadLetteredAtMs: number,
): { delivery: Record<string, unknown>; deadLetter: Record<string, unknown> } {
  // Eight failed attempts at the D7 waits, then the 72-hour dead-letter wait.
  const attemptOffsetsMs: number[] = [];
  let offset = 0;
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    offset += RETRY_WAIT_SECONDS[attempt] * 1000;
    attemptOffsetsMs.push(offset);
  }
  const createdMs = deadLetteredAtMs - 72 * HOUR_MS - attemptOffsetsMs[MAX_ATTEMPTS - 1];
  const id = newDeliveryId(createdMs);
  const eventId = newEventId(createdMs);
  const attemptLog: DeliveryAttemptRecord[] = attemptOffsetsMs.map((attemptOffset, index) => ({
    attempt: index + 1,
    planned_at: isoTime(createdMs + attemptOffset),
    attempted_at: isoTime(createdMs + attemptOffset),
    status: 500,
    failure_kind: 'http_status',
    duration_ms: 42,
    connect_ms: null,
    remote_address: '203.0.113.10',
    tls_version: 'TLSv1.3',
    response_body: 'Internal Server Error',
  }));
  const deadLetteredAt = isoTime(deadLetteredAtMs);
  const delivery = {
    ...keys.delivery(teamId, id),
    entity: 'delivery',
    id,
    team_id: teamId,
    endpoint_id: endpointId,
    event_id: eventId,
    event_type: 'project.created',
    status: 'dead',
    attempts: MAX_ATTEMPTS,
    next_attempt_at: null,
    last_attempt_at: attemptLog[MAX_ATTEMPTS - 1].attempted_at,
    dead_lettered_at: deadLetteredAt,
    created_at: isoTime(createdMs),
    due_at_ms: null,
    lease_expires_at_ms: null,
    attempt_log: attemptLog,
    expires_at: Math.floor(createdMs / 1000) + RETENTION_SECONDS,
  };
  const deadLetter = {
    ...keys.deadLetter(teamId, deadLetteredAt, id),
    delivery_id: id,
    team_id: teamId,
    endpoint_id: endpointId,
    event_id: eventId,
    event_type: 'project.created',
    attempts: MAX_ATTEMPTS,
    dead_lettered_at: deadLetteredAt,
    expires_at: Math.floor(deadLetteredAtMs / 1000) + RETENTION_SECONDS,
  };
  return { delivery, deadLetter };
}

async function countQuery(
  store: Store,
  input: {
    TableName: string;
    KeyConditionExpression: string;
    FilterExpression?: string;
    ExpressionAttributeNames?: Record<string, string>;
    ExpressionAttributeValues: Record<string, unknown>;
  },
): Promise<number> {
  let count = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await store.document.send(
      new QueryCommand({ ...input, Select: 'COUNT', ExclusiveStartKey: startKey }),
    );
    count += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return count;
}

/** Options of {@link measureReplay}. */
export interface ReplayOptions {
  /** DynamoDB Local endpoint. */
  endpoint: string;
  deliveries: number;
  sinceHours: number;
  progress: (line: string) => void;
}

/**
 * Seeds `deliveries` dead deliveries of one team into fresh tables (dead-lettered at times spread over
 * the last `sinceHours - 4` hours, so all fall inside the window), then times
 * `replayDeadDeliveries(runtime, principal, sinceHours)` and counts its DynamoDB requests through the
 * client's middleware stack. Afterwards checks the dead-letter copies are gone and the rows are pending.
 */
export async function measureReplay(options: ReplayOptions): Promise<ReplayResult> {
  const client = localDynamoDbClient(options.endpoint);
  const counter = attachRequestCounter(client.middlewareStack);
  const name = `bench-replay-${randomBytes(4).toString('hex')}`;
  const store = createStore({ client, tableName: name, deadLetterTableName: `${name}-dead` });
  try {
    await createTables(store.document, { table: store.tableName, deadLetterTable: store.deadLetterTableName });
    const teamId = randomUUID();
    const endpointId = randomUUID();
    const nowMs = Date.now();
    const spreadMs = Math.max(1, options.sinceHours - 4) * HOUR_MS;
    const puts: RecordedPut[] = [];
    for (let index = 0; index < options.deliveries; index++) {
      const deadAtMs = nowMs - spreadMs + Math.floor((index * spreadMs) / options.deliveries);
      const { delivery, deadLetter } = deadDeliveryItems(teamId, endpointId, deadAtMs);
      puts.push({ table: 'main', item: delivery }, { table: 'deadLetter', item: deadLetter });
    }
    options.progress(
      `replay-dead: seeding ${options.deliveries} dead deliveries (${puts.length} items, ${Math.ceil(puts.length / 25)} BatchWriteItem requests)`,
    );
    const seedStarted = performance.now();
    await batchWrite(store, puts, 8);
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    const queued = { messages: 0, sends: 0, ids: new Set<string>() };
    const batches: ReplayBatchMessage[] = [];
    const transport: WebhookTransport = {
      async send() {
        return {
          ok: false,
          status: null,
          failure_kind: 'connect',
          failure_message: 'bench: no transport',
          duration_ms: 0,
          response_body: '',
          remote_address: null,
        };
      },
    };
    const runtime: Runtime = {
      store,
      clock: systemClock,
      deliveryQueue: {
        async send(messages: readonly PipelineMessage[]) {
          const attempts = messages.filter(
            (message): message is DeliveryMessage => message.kind === 'attempt' || message.kind === 'dead_letter',
          );
          for (const message of messages) if (message.kind === 'replay_batch') batches.push(message);
          if (attempts.length === 0) return;
          queued.sends++;
          queued.messages += attempts.length;
          for (const message of attempts) queued.ids.add(message.delivery_id);
        },
      },
      retryScheduler: { async schedule() {} },
      transport,
      eventsCommitted() {},
      timeScale: 1,
    };
    const principal: Principal = { tokenId: 'bench', teamId, abilities: new Set(ABILITY_VALUES), projectIds: null };

    options.progress(`replay-dead: a job with since_hours=${options.sinceHours}, then its batches`);
    counter.reset();
    const started = performance.now();
    const job = await createReplayJob(runtime, principal, ReplayDeadRequest.parse({ since_hours: options.sinceHours }));
    const secondsTo202 = (performance.now() - started) / 1000;
    for (let batch = batches.shift(); batch; batch = batches.shift()) await processDeliveryMessage(runtime, batch);
    const seconds = (performance.now() - started) / 1000;
    const counts = counter.snapshot();
    const { replayed } = await getReplayJob(runtime, principal, job.id);

    const partition = keys.teamPartition(teamId);
    const deadLetterLeft = await countQuery(store, {
      TableName: store.deadLetterTableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.deadLetter },
    });
    const pendingAfter = await countQuery(store, {
      TableName: store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      FilterExpression: '#status = :pending AND attempts = :zero',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: {
        ':pk': partition,
        ':prefix': sortKeyPrefix.delivery,
        ':pending': 'pending',
        ':zero': 0,
      },
    });
    return {
      seeded: options.deliveries,
      seedSeconds,
      sinceHours: options.sinceHours,
      secondsTo202,
      seconds,
      matched: job.matched,
      dynamoDbRequests: counts.commands,
      dynamoDbAttempts: counts.attempts,
      byCommand: counts.byCommand,
      replayed,
      queueMessages: queued.messages,
      queueSends: queued.sends,
      distinctQueuedDeliveries: queued.ids.size,
      deadLetterLeft,
      pendingAfter,
    };
  } finally {
    client.destroy();
  }
}
