/**
 * Test helpers shared by integration tests (DESIGN §6): a store on the run's one DynamoDB Local
 * (`process.env.DYNAMODB_ENDPOINT`, started by `test/global-setup.ts`) with uniquely named tables, a
 * `Runtime` whose queue and scheduler RECORD messages instead of delivering them (tests drive
 * `processDeliveryMessage` by hand while moving a manual clock), the tests' one manual clock
 * ({@link testClock}) and their one way to get a token and its principal ({@link seedTeam} for a fresh
 * team, {@link seedToken} for another token of an existing team).
 *
 * Keep this file small: add a helper only when several test files need it.
 */
import { randomBytes } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ABILITY_VALUES, type Ability } from '../../shared/catalogues/abilities.js';
import { manualClock, type Clock, type ManualClock } from '../../shared/clock.js';
import { authenticate, type Principal } from '../../shared/auth/principal.js';
import { mintToken } from '../../shared/domain/tokens/repository.js';
import type {
  BroadcastBatchMessage,
  ImportPageMessage,
  AccessAuditPageMessage,
  AccessCodeBatchMessage,
  DeliveryMessage,
  MessageSendMessage,
  ReplayBatchMessage,
  Runtime,
} from '../../shared/runtime.js';
import { createTables } from '../../shared/store/create-tables.js';
import { createStore, type Store } from '../../shared/store/store.js';
import { createTeam } from '../../shared/domain/teams/repository.js';
import { TIER_ATTRIBUTE } from '../../shared/domain/billing/record.js';
import type { BillingTier } from '../../shared/domain/billing/schema.js';
import { keys } from '../../shared/store/keys.js';
import type { Team } from '../../shared/domain/teams/schema.js';
import type { AttemptResult, WebhookTransport } from '../../shared/domain/webhook-deliveries/transport/port.js';

/**
 * Creates a fresh pair of tables (`t-<random>` and `t-<random>-dead`) on DynamoDB Local and returns a
 * {@link Store} over them. Throws when `DYNAMODB_ENDPOINT` is not set (run through vitest).
 */
export async function createTestStore(): Promise<Store> {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set; run the tests through vitest (test/global-setup.ts).');
  const name = `t-${randomBytes(6).toString('hex')}`;
  registerTestTables(name, `${name}-dead`);
  const store = createStore({ endpoint, tableName: name, deadLetterTableName: `${name}-dead` });
  await createTables(store.document, { table: store.tableName, deadLetterTable: store.deadLetterTableName });
  return store;
}

/**
 * `runtime` with a store that records, in order, when each `update`, `get` and `put` is sent and answered, named by the
 * first part of its key's `pk` (`update RATE sent`, `get TEAM answered`) or of a put's `sk` (`put IDEMPOTENCY sent`):
 * which round trips a pipeline overlaps.
 */
export function traceRoundTrips<T extends { store: Store }>(runtime: T): { runtime: T; events: string[] } {
  const events: string[] = [];
  const store = new Proxy(runtime.store, {
    get: (target, property, receiver) => {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'update' && property !== 'get' && property !== 'put') return value;
      return async (...args: [{ Key?: { pk: string }; pk?: string; Item?: { sk?: string } }, ...unknown[]]) => {
        // An update takes a request with its `Key`, a get the key itself: named by the partition; a put by its sort
        // key.
        const address = property === 'put' ? args[0].Item?.sk : (args[0].Key?.pk ?? args[0].pk);
        const name = `${String(property)} ${(address ?? '').split('#')[0]}`;
        events.push(`${name} sent`);
        const answer = await (value as (...args: unknown[]) => Promise<unknown>).apply(target, args);
        events.push(`${name} answered`);
        return answer;
      };
    },
  });
  return { runtime: { ...runtime, store }, events };
}

/** One DynamoDB request a {@link countingStore} sent: the command's name (`GetCommand`, …) and its input. */
export interface SentRequest {
  command: string;
  input: Record<string, unknown>;
}

/**
 * A store over the same tables as `store` that counts the DynamoDB requests sent through it (one per
 * `send`: how many reads a use case makes is behaviour a test may assert, unlike its timing); `sent()` lists them.
 */
export function countingStore(store: Store): {
  store: Store;
  requests(): number;
  sent(): SentRequest[];
  reset(): void;
} {
  let sent: SentRequest[] = [];
  const document = new Proxy(store.document, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return (...args: unknown[]) => {
        const command = args[0] as { constructor: { name: string }; input: Record<string, unknown> };
        sent.push({ command: command.constructor.name, input: command.input });
        return (target.send as (...args: unknown[]) => Promise<unknown>).apply(target, args);
      };
    },
  });
  return {
    store: createStore({ document, tableName: store.tableName, deadLetterTableName: store.deadLetterTableName }),
    requests: () => sent.length,
    sent: () => sent,
    reset: () => {
      sent = [];
    },
  };
}

/**
 * The tables the running test file created outside its tests, deleted after it (a worker runs its files one at a time,
 * and `test/setup-file.ts` empties this after each).
 */
const createdTables = new Set<string>();
/** The tables created while a test runs (its `beforeEach` hooks included), deleted after that test. */
const testTables = new Set<string>();
let inTest = false;

/**
 * Records tables a test file creates, for {@link deleteTestTables} after the test or the file (`test/setup-file.ts`).
 */
export function registerTestTables(...names: string[]): void {
  for (const name of names) (inTest ? testTables : createdTables).add(name);
}

/**
 * From now until {@link deleteTestTables} with `'test'`, new tables belong to the test that runs
 * (`test/setup-file.ts`).
 */
export function beginTestTables(): void {
  inTest = true;
}

/**
 * Deletes the tables the current test (`'test'`, after each test) or the whole file (`'file'`) created; never
 * throws (a table already gone is fine). One DynamoDB Local serves the whole run, and it slows down markedly
 * as tables pile up (its TTL job and queries visit every table), so a file whose tests each make their own
 * tables leaves none behind after each test, and each file leaves none behind at all.
 */
export async function deleteTestTables(scope: 'test' | 'file' = 'file'): Promise<void> {
  inTest = false;
  const names = scope === 'test' ? [...testTables] : [...createdTables, ...testTables];
  testTables.clear();
  if (scope === 'file') createdTables.clear();
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint || names.length === 0) return;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await Promise.all(
      names.map((TableName) => client.send(new DeleteTableCommand({ TableName })).catch(() => undefined)),
    );
  } finally {
    client.destroy();
  }
}

/**
 * The tests' one manual clock. It starts at the current real time truncated to a whole second; with
 * `secondsIntoMinute`, it starts that many seconds into the NEXT whole real minute instead, for tests
 * whose assertions depend on where a one-minute rate window begins (`Retry-After`, counters).
 *
 * Never start a clock at a fixed past date in a test that writes to DynamoDB Local: the bundled
 * DynamoDB Local runs a real TTL deletion job, so items whose `expires_at` (derived from the injected
 * clock) lies in the real past — outbox events, deliveries, idempotency records, rate counters,
 * sessions — can vanish in the middle of a test.
 */
export function testClock(options: { secondsIntoMinute?: number } = {}): ManualClock {
  const nowMs = Date.now();
  if (options.secondsIntoMinute === undefined) return manualClock(Math.floor(nowMs / 1000) * 1000);
  return manualClock((Math.floor(nowMs / 60_000) + 1) * 60_000 + options.secondsIntoMinute * 1000);
}

/** A message handed to the recording `deliveryQueue`. */
interface QueuedMessage {
  message: DeliveryMessage;
  delaySeconds: number;
}

/** A message handed to the recording `retryScheduler`. */
interface ScheduledMessage {
  message: DeliveryMessage;
  atMs: number;
}

/** A {@link Runtime} whose queue and scheduler only record what they are given. */
export interface TestRuntime extends Runtime {
  /** Every message sent to the queue, in order. */
  queued: QueuedMessage[];
  /** Every message handed to the scheduler, in order. */
  scheduled: ScheduledMessage[];
  /** Every replay job's batch message sent to the queue, in order (kept apart from {@link queued}). */
  replayBatches: ReplayBatchMessage[];
  /** Every broadcast job's batch message sent to the queue, in order (kept apart from {@link queued}). */
  broadcastBatches: BroadcastBatchMessage[];
  /** Every import job's page message sent to the queue, in order (kept apart from {@link queued}). */
  importPages: ImportPageMessage[];
  /** Every access audit's page message sent to the queue, in order (kept apart from {@link queued}). */
  auditPages: AccessAuditPageMessage[];
  /** Every access-code batch job's message sent to the queue, in order (kept apart from {@link queued}). */
  accessCodeBatches: AccessCodeBatchMessage[];
  /** Every message-send queue message, with its delay in seconds, in order (kept apart from {@link queued}). */
  messageSends: { message: MessageSendMessage; delaySeconds: number }[];
  /** Empties {@link queued} and {@link scheduled}, returning what they held. */
  drain(): { queued: QueuedMessage[]; scheduled: ScheduledMessage[] };
}

/** A transport that fails every attempt (the default of {@link createTestRuntime}: tests opt in to success). */
const failingTransport: WebhookTransport = {
  async send(): Promise<AttemptResult> {
    return {
      ok: false,
      status: null,
      failure_kind: 'connect',
      failure_message: 'no transport configured',
      duration_ms: 0,
      response_body: '',
      remote_address: null,
    };
  },
};

/**
 * Builds a {@link TestRuntime} on `store` (default: a new {@link createTestStore}). The queue and the scheduler record
 * messages (a replay job's batch messages in `replayBatches`); `eventsCommitted` does nothing; `timeScale` defaults to
 * 1.
 */
export async function createTestRuntime(options: {
  clock: Clock;
  transport?: WebhookTransport;
  store?: Store;
  timeScale?: number;
}): Promise<TestRuntime> {
  const store = options.store ?? (await createTestStore());
  const runtime: TestRuntime = {
    store,
    clock: options.clock,
    transport: options.transport ?? failingTransport,
    timeScale: options.timeScale ?? 1,
    eventsCommitted: () => undefined,
    queued: [],
    scheduled: [],
    replayBatches: [],
    broadcastBatches: [],
    importPages: [],
    auditPages: [],
    accessCodeBatches: [],
    messageSends: [],
    deliveryQueue: {
      async send(messages, delaySeconds) {
        for (const message of messages) {
          if (message.kind === 'replay_batch') runtime.replayBatches.push({ ...message });
          else if (message.kind === 'broadcast_batch') runtime.broadcastBatches.push({ ...message });
          else if (message.kind === 'import_page') runtime.importPages.push({ ...message });
          else if (message.kind === 'access_audit_page') runtime.auditPages.push({ ...message });
          else if (message.kind === 'access_code_batch') runtime.accessCodeBatches.push({ ...message });
          else if (message.kind === 'message_send')
            runtime.messageSends.push({ message: { ...message }, delaySeconds });
          else runtime.queued.push({ message: { ...message }, delaySeconds });
        }
      },
    },
    retryScheduler: {
      async schedule(message, atMs) {
        runtime.scheduled.push({ message: { ...message }, atMs });
      },
    },
    drain() {
      const drained = { queued: runtime.queued.splice(0), scheduled: runtime.scheduled.splice(0) };
      return drained;
    },
  };
  return runtime;
}

/** A token minted for a test: its id, its bearer string and the {@link Principal} it resolves to. */
export interface SeededToken {
  id: string;
  /** The bearer string, `svc_live_<id>_<secret>`. */
  token: string;
  principal: Principal;
}

/**
 * Mints a token of the existing team `teamId` holding `abilities` (default: every ability), narrowed
 * to `projectIds` when given, and resolves its bearer string with `authenticate`, exactly as the REST
 * and tool-server pipelines do, so the principal is the one a request with that token would get.
 */
export async function seedToken(
  store: Store,
  clock: Clock,
  input: { teamId: string; abilities?: readonly Ability[]; projectIds?: readonly string[]; name?: string },
): Promise<SeededToken> {
  const minted = await mintToken(store, clock, {
    teamId: input.teamId,
    abilities: input.abilities ?? ABILITY_VALUES,
    projectIds: input.projectIds,
    name: input.name,
  });
  const principal = await authenticate(store, `Bearer ${minted.token}`);
  return { id: minted.id, token: minted.token, principal };
}

/**
 * Creates a team and mints a team-wide token for it holding `abilities` (default: every ability)
 * with {@link seedToken}, returning the team and the token (id, bearer string, principal). The team is on
 * `tier` (default `business`, no limits, D20; set without events) so only tests that ask meet a tier limit.
 */
export async function seedTeam(
  store: Store,
  clock: Clock,
  abilities: readonly Ability[] = ABILITY_VALUES,
  tier: BillingTier = 'business',
): Promise<{ team: Team } & SeededToken> {
  const team = await createTeam(store, clock, { name: `Test team ${randomBytes(3).toString('hex')}` });
  // Tests meet tier limits (D20) only where they ask for a limited tier: the tier is set without events.
  if (tier !== 'free')
    await store.update({
      Key: keys.team(team.id),
      UpdateExpression: 'SET #tier = :tier',
      ExpressionAttributeNames: { '#tier': TIER_ATTRIBUTE },
      ExpressionAttributeValues: { ':tier': tier },
    });
  return { team, ...(await seedToken(store, clock, { teamId: team.id, abilities })) };
}
