/**
 * Benchmark 5 (DESIGN D14): `GET /v1/metrics` reads counters and daily rollups, never subscriptions, so its
 * DynamoDB requests and latency do not grow with the number of subscribers. For each size, a new team of
 * its own (a token, a project, a monthly plan) gets that many active subscriptions billed through the
 * provider, their creations spread over the last 90 days, each with a succeeded payment: the items the
 * subscriptions repository's own `addSubscriptionCreation` writes (metrics counters included) and the
 * metrics of each payment (`writePaymentMetrics`; the payment items themselves are left out: the read does
 * not touch them), recorded on a {@link recordingTransaction} and seeded with BatchWriteItem and folded
 * counter updates. Then `calls` sequential `GET /v1/metrics`, counting each call's DynamoDB requests.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { DAY_MS, manualClock } from '../shared/clock.js';
import { writePaymentMetrics } from '../shared/domain/metrics/writes.js';
import { createPlan } from '../shared/domain/plans/creation.js';
import { createProject } from '../shared/domain/projects/creation.js';
import { createTeam } from '../shared/domain/teams/repository.js';
import type { LocalService } from '../shared/local/service.js';
import type { UnitOfWorkRuntime } from '../shared/store/unit-of-work.js';
import {
  addSeededSubscription,
  applyFoldedUpdates,
  batchWrite,
  readsNothingStore,
  recordingTransaction,
} from './seeding.js';
import { RATE_LIMITS } from '../shared/limits/rate-limit.js';
import { summarize, type LatencySummary } from './measuring.js';
import { fullPrincipal } from './subscriptions.js';
import type { RequestCounter } from './support.js';
import { mintTokens, tokensNeeded } from './tokens.js';

/** Days the seeded creations are spread over (the series' length). */
const SPREAD_DAYS = 90;

/** Figures of `GET /v1/metrics` for one team size. */
export interface MetricsFigures {
  subscribers: number;
  seedSeconds: number;
  calls: number;
  latency: LatencySummary;
  /** DynamoDB requests per call (min–max) and where they go (summed over the calls). */
  requests: { min: number; max: number };
  described: Record<string, number>;
  /** The answer's active subscriptions (should equal `subscribers`). */
  active: number;
  errors: string[];
}

/**
 * Seeds a new team with `subscribers` active paid subscriptions (see the module comment); returns bearer
 * tokens enough for `calls` calls under the per-token REST rate limit (D4).
 */
async function seedTeam(
  service: LocalService,
  subscribers: number,
  calls: number,
  progress: (line: string) => void,
): Promise<{ tokens: string[]; seedSeconds: number }> {
  const nowMs = Math.floor(Date.now() / 1000) * 1000;
  const past = manualClock(nowMs - SPREAD_DAYS * DAY_MS);
  const store = service.store;
  // The setup's events (team, project, plan) go to the service's pipeline, labelled background, not charged to a call.
  const runtime: UnitOfWorkRuntime = {
    store,
    clock: past,
    eventsCommitted: (events) => service.runtime.eventsCommitted(events),
  };
  const team = await createTeam(
    store,
    past,
    { name: `Bench metrics ${subscribers}` },
    { onEventsCommitted: () => service.runtime.eventsCommitted() },
  );
  const minted = await mintTokens(store, team.id, tokensNeeded(calls, RATE_LIMITS.rest.limit), 'bench metrics');
  const token = minted[0];
  const principal = fullPrincipal(team.id, token.id);
  const project = await createProject(runtime, principal, { name: 'Bench metrics', platform_type: 'web' });
  const plan = await createPlan(runtime, principal, project.id, {
    name: 'Monthly',
    amount: 900,
    currency: 'USD',
    interval: 'month',
  });
  progress(
    `metrics: seeding ${subscribers.toLocaleString('en-US')} paid subscriptions over ${SPREAD_DAYS} days (BatchWriteItem)`,
  );
  const started = performance.now();
  const seedRuntime: UnitOfWorkRuntime = { store: readsNothingStore(store), clock: past, eventsCommitted() {} };
  const tx = recordingTransaction();
  for (let index = 0; index < subscribers; index++) {
    const atMs = nowMs - (index % SPREAD_DAYS) * DAY_MS - 60_000;
    const subscription = await addSeededSubscription(tx, seedRuntime, principal, {
      projectId: project.id,
      plan,
      displayName: `Paying ${index}`,
      source: 'provider',
      atMs,
      paymentProvider: 'manual',
    });
    const at = subscription.created_at;
    writePaymentMetrics(tx, team.id, null, {
      id: subscription.id,
      project_id: project.id,
      subscriber_id: subscription.subscriber_id,
      subscription_id: subscription.id,
      amount: plan.amount,
      amount_refunded: 0,
      currency: plan.currency,
      status: 'succeeded',
      provider: 'manual',
      provider_payment_id: null,
      billing_reason: 'subscription_create',
      mismatch: null,
      discount: null,
      created_at: at,
      updated_at: at,
    });
  }
  await batchWrite(store, tx.puts, 8);
  await applyFoldedUpdates(store, tx.updates);
  await service.runtime.idle();
  return { tokens: minted.map((each) => each.token), seedSeconds: (performance.now() - started) / 1000 };
}

/**
 * For each size of `sizes`: seeds a team of its own, then measures `calls` sequential `GET /v1/metrics`,
 * spread over tokens under the rate limit (after one unmeasured call per token, which stamps its `last_used_at`).
 */
export async function measureMetrics(options: {
  service: LocalService;
  counter: RequestCounter;
  sizes: readonly number[];
  calls: number;
  progress: (line: string) => void;
}): Promise<MetricsFigures[]> {
  const { service, counter } = options;
  const results: MetricsFigures[] = [];
  for (const subscribers of options.sizes) {
    const { tokens, seedSeconds } = await seedTeam(service, subscribers, options.calls, options.progress);
    const read = (call: number) =>
      fetch(`${service.baseUrl}/v1/metrics`, { headers: { Authorization: `Bearer ${tokens[call % tokens.length]}` } });
    for (let index = 0; index < tokens.length; index++) await (await read(index)).text();
    options.progress(
      `metrics: ${options.calls} × GET /v1/metrics with ${subscribers.toLocaleString('en-US')} subscribers`,
    );
    const latencies: number[] = [];
    const requests: number[] = [];
    const described: Record<string, number> = {};
    const errors: string[] = [];
    let active = 0;
    for (let call = 0; call < options.calls; call++) {
      await service.runtime.idle();
      counter.reset();
      const started = performance.now();
      const response = await read(call);
      const text = await response.text();
      latencies.push(performance.now() - started);
      const counts = counter.snapshot();
      requests.push(counts.commands);
      for (const [description, count] of Object.entries(counts.described))
        described[description] = (described[description] ?? 0) + count;
      if (response.status !== 200) {
        if (errors.length < 3) errors.push(`${response.status} ${text.slice(0, 160)}`);
      } else active = (JSON.parse(text) as { subscriptions: { active: number } }).subscriptions.active;
    }
    results.push({
      subscribers,
      seedSeconds,
      calls: options.calls,
      latency: summarize(latencies),
      requests: { min: Math.min(...requests), max: Math.max(...requests) },
      described,
      active,
      errors,
    });
  }
  return results;
}
