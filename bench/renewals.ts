/**
 * Benchmark 4c (DESIGN D14, D17): the deadline worker (`applyDueDeadlines`) applying 10,000 due renewals, in fresh
 * tables: transitions per second beside the store's write ceiling measured right after on the same tables. The
 * subscriptions are built by the subscriptions repository's own `addSubscriptionCreation`.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { DAY_MS, manualClock, systemClock } from '../shared/clock.js';
import { applyDueDeadlines } from '../shared/deadlines/worker.js';
import { TIER_ATTRIBUTE } from '../shared/domain/billing/record.js';
import { createPlan } from '../shared/domain/plans/creation.js';
import type { Plan } from '../shared/domain/plans/schema.js';
import { createProject } from '../shared/domain/projects/creation.js';
import { getSubscription } from '../shared/domain/subscriptions/queries.js';
import { createTeam } from '../shared/domain/teams/repository.js';
import { createTables } from '../shared/store/create-tables.js';
import { localDynamoDbClient } from '../shared/store/dynamodb-local.js';
import { keys } from '../shared/store/keys.js';
import { createStore } from '../shared/store/store.js';
import type { UnitOfWorkRuntime } from '../shared/store/unit-of-work.js';
import { runPool } from './measuring.js';
import {
  addSeededSubscription,
  applyFoldedUpdates,
  batchWrite,
  readsNothingStore,
  recordingTransaction,
} from './seeding.js';
import { measureWriteCeiling, type WriteCeiling } from './store-baseline.js';
import { fullPrincipal } from './subscriptions.js';
import { attachRequestCounter } from './support.js';

/** Figures of the deadline worker applying due renewals. */
export interface RenewalFigures {
  renewals: number;
  seedSeconds: number;
  /** Worker runs (`applyDueDeadlines` calls, back to back) until a run applied nothing. */
  runs: number;
  applied: number;
  failed: number;
  seconds: number;
  transitionsPerSecond: number;
  /** DynamoDB requests per applied renewal, and where they go (summed; divide by `applied`). */
  requestsPerTransition: number;
  described: Record<string, number>;
  /** Subscriptions sampled afterwards whose period moved into the future (should equal the sample size). */
  renewedInSample: number;
  sample: number;
  ceiling: WriteCeiling;
}

/**
 * In fresh tables on `endpoint`: a team (business tier), a project and a weekly plan created 8 days ago
 * (clock set back), then `renewals` active creator-grant subscriptions started 8 days ago — so each
 * one's period ended a day ago and its `subscription.clock` deadline (a renewal) is due — seeded with
 * BatchWriteItem. Then runs the deadline worker back to back until a run applies nothing, counting its
 * DynamoDB requests, checks a sample of subscriptions renewed, and measures the write ceiling
 * (`ceilingUpdates` conditional UpdateItems at `ceilingConcurrency`) on the same tables.
 */
export async function measureRenewals(options: {
  endpoint: string;
  renewals: number;
  ceilingUpdates: number;
  ceilingConcurrency: number;
  progress: (line: string) => void;
}): Promise<RenewalFigures> {
  const client = localDynamoDbClient(options.endpoint);
  const name = `bench-renewals-${randomBytes(4).toString('hex')}`;
  const store = createStore({ client, tableName: name, deadLetterTableName: `${name}-dead` });
  try {
    await createTables(store.document, { table: store.tableName, deadLetterTable: store.deadLetterTableName });
    const startMs = Math.floor(Date.now() / 1000) * 1000 - 8 * DAY_MS;
    const past = manualClock(startMs);
    const pastRuntime: UnitOfWorkRuntime = { store, clock: past, eventsCommitted() {} };
    const team = await createTeam(store, past, { name: 'Bench renewals' });
    await store.update({
      Key: keys.team(team.id),
      UpdateExpression: 'SET #tier = :tier',
      ExpressionAttributeNames: { '#tier': TIER_ATTRIBUTE },
      ExpressionAttributeValues: { ':tier': 'business' },
    });
    const principal = fullPrincipal(team.id, 'bench');
    const project = await createProject(pastRuntime, principal, { name: 'Bench renewals', platform_type: 'web' });
    const plan: Plan = await createPlan(pastRuntime, principal, project.id, {
      name: 'Weekly',
      amount: 300,
      currency: 'USD',
      interval: 'week',
    });

    options.progress(
      `renewals: seeding ${options.renewals.toLocaleString('en-US')} active subscriptions whose period ended a day ago`,
    );
    const seedStarted = performance.now();
    const seedRuntime: UnitOfWorkRuntime = { store: readsNothingStore(store), clock: past, eventsCommitted() {} };
    const tx = recordingTransaction();
    const subscriptionIds: string[] = [];
    for (let index = 0; index < options.renewals; index++) {
      const subscription = await addSeededSubscription(tx, seedRuntime, principal, {
        projectId: project.id,
        plan,
        displayName: `Renewing ${index}`,
        source: 'creator_grant',
        atMs: startMs,
      });
      subscriptionIds.push(subscription.id);
    }
    await batchWrite(store, tx.puts, 8);
    await applyFoldedUpdates(store, tx.updates);
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    options.progress('renewals: the deadline worker, run after run until nothing is due');
    const counter = attachRequestCounter(client.middlewareStack);
    const runtime: UnitOfWorkRuntime = { store, clock: systemClock, eventsCommitted() {} };
    let runs = 0;
    let applied = 0;
    let failed = 0;
    const failures: string[] = [];
    counter.reset();
    const started = performance.now();
    for (;;) {
      const result = await applyDueDeadlines(runtime, systemClock.nowMs(), {
        onError: (error) => {
          if (failures.length < 3) failures.push((error as Error).message);
        },
      });
      runs++;
      applied += result.applied;
      failed += result.failed;
      if (result.applied === 0 || runs > 100) break;
    }
    const seconds = (performance.now() - started) / 1000;
    const counts = counter.snapshot();
    if (failures.length) options.progress(`renewals: handler failures: ${failures.join(' | ')}`);

    const sample = subscriptionIds.filter(
      (_, index) => index % Math.max(1, Math.floor(subscriptionIds.length / 50)) === 0,
    );
    let renewedInSample = 0;
    await runPool(sample.length, 8, async (index) => {
      const subscription = await getSubscription(store, principal, sample[index]);
      if (
        subscription.status === 'active' &&
        subscription.current_period_end &&
        Date.parse(subscription.current_period_end) > Date.now()
      )
        renewedInSample++;
    });

    options.progress(
      `renewals: write ceiling, ${options.ceilingUpdates} conditional UpdateItems at concurrency ${options.ceilingConcurrency}`,
    );
    const ceiling = await measureWriteCeiling(store, {
      updates: options.ceilingUpdates,
      concurrency: options.ceilingConcurrency,
    });
    return {
      renewals: options.renewals,
      seedSeconds,
      runs,
      applied,
      failed,
      seconds,
      transitionsPerSecond: applied / seconds,
      requestsPerTransition: counts.commands / Math.max(1, applied),
      described: counts.described,
      renewedInSample,
      sample: sample.length,
      ceiling,
    };
  } finally {
    client.destroy();
  }
}
