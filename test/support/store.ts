/**
 * Test helpers shared by integration tests (DESIGN §6): a store on the run's one DynamoDB Local
 * (`process.env.DYNAMODB_ENDPOINT`, started by `test/global-setup.ts`) with uniquely named tables, a
 * `Runtime` whose queue and scheduler RECORD messages instead of delivering them (tests drive
 * `processDeliveryMessage` by hand while moving a manual clock), and a seeded team with a principal.
 *
 * Keep this file small: add a helper only when several test files need it.
 */
import { randomBytes } from 'node:crypto';
import { ABILITY_VALUES, type Ability } from '../../shared/catalogues/abilities.js';
import { manualClock, type Clock, type ManualClock } from '../../shared/clock.js';
import type { Principal } from '../../shared/auth/tokens.js';
import { mintToken } from '../../shared/auth/tokens.js';
import type { DeliveryMessage, Runtime } from '../../shared/runtime.js';
import { createTables } from '../../shared/store/create-tables.js';
import { createStore, type Store } from '../../shared/store/store.js';
import { createTeam, type Team } from '../../shared/teams.js';
import type { AttemptResult, WebhookTransport } from '../../shared/webhooks/transport.js';

/**
 * Creates a fresh pair of tables (`t-<random>` and `t-<random>-dead`) on DynamoDB Local and returns a
 * {@link Store} over them. Throws when `DYNAMODB_ENDPOINT` is not set (run through vitest).
 */
export async function createTestStore(): Promise<Store> {
  const endpoint = process.env.DYNAMODB_ENDPOINT;
  if (!endpoint) throw new Error('DYNAMODB_ENDPOINT is not set; run the tests through vitest (test/global-setup.ts).');
  const name = `t-${randomBytes(6).toString('hex')}`;
  const store = createStore({ endpoint, tableName: name, deadLetterTableName: `${name}-dead` });
  await createTables(store.document, { table: store.tableName, deadLetterTable: store.deadLetterTableName });
  return store;
}

/**
 * A manual clock starting at the current real time, truncated to a whole second.
 *
 * Use it instead of `manualClock()`'s fixed default start in tests that write to DynamoDB Local:
 * the bundled DynamoDB Local runs a real TTL deletion job, so items whose `expires_at` (derived from
 * the injected clock) lies in the real past can vanish in the middle of a test.
 */
export function testClock(): ManualClock {
  return manualClock(Math.floor(Date.now() / 1000) * 1000);
}

/** A message handed to the recording `deliveryQueue`. */
export interface QueuedMessage {
  message: DeliveryMessage;
  delaySeconds: number;
}

/** A message handed to the recording `retryScheduler`. */
export interface ScheduledMessage {
  message: DeliveryMessage;
  atMs: number;
}

/** A {@link Runtime} whose queue and scheduler only record what they are given. */
export interface TestRuntime extends Runtime {
  /** Every message sent to the queue, in order. */
  queued: QueuedMessage[];
  /** Every message handed to the scheduler, in order. */
  scheduled: ScheduledMessage[];
  /** Empties {@link queued} and {@link scheduled}, returning what they held. */
  drain(): { queued: QueuedMessage[]; scheduled: ScheduledMessage[] };
}

/** A transport that fails every attempt (the default of {@link createTestRuntime}: tests opt in to success). */
const failingTransport: WebhookTransport = {
  async send(): Promise<AttemptResult> {
    return { ok: false, status: null, failure_kind: 'connect', failure_message: 'no transport configured', duration_ms: 0, response_body: '', remote_address: null };
  },
};

/**
 * Builds a {@link TestRuntime} on `store` (default: a new {@link createTestStore}). The queue and the
 * scheduler record messages; `eventsCommitted` does nothing; `timeScale` defaults to 1.
 */
export async function createTestRuntime(options: { clock: Clock; transport?: WebhookTransport; store?: Store; timeScale?: number }): Promise<TestRuntime> {
  const store = options.store ?? (await createTestStore());
  const runtime: TestRuntime = {
    store,
    clock: options.clock,
    transport: options.transport ?? failingTransport,
    timeScale: options.timeScale ?? 1,
    eventsCommitted: () => undefined,
    queued: [],
    scheduled: [],
    deliveryQueue: {
      async send(messages, delaySeconds) {
        for (const message of messages) runtime.queued.push({ message: { ...message }, delaySeconds });
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

/**
 * Creates a team and mints a token for it holding `abilities` (default: every ability), returning
 * the team, the bearer string and a {@link Principal} for that token (team-wide, no project scope).
 */
export async function seedTeam(
  store: Store,
  clock: Clock,
  abilities: readonly Ability[] = ABILITY_VALUES,
): Promise<{ team: Team; token: string; principal: Principal }> {
  const team = await createTeam(store, clock, { name: `Test team ${randomBytes(3).toString('hex')}` });
  const minted = await mintToken(store, clock, { teamId: team.id, abilities });
  const principal: Principal = { tokenId: minted.id, teamId: team.id, abilities: new Set(minted.abilities), projectIds: null };
  return { team, token: minted.token, principal };
}
