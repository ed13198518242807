/**
 * Part 1 (`calls`) of `npm run bench`: requests per call and latency of the REST, MCP and front-door calls, refused
 * authentication and refused Stripe hook requests, each checked and printed; and the store's own figures (1c), which
 * every run measures.
 *
 * @module
 */
import type { LocalService } from '../shared/local/service.js';
import type { Store } from '../shared/store/store.js';
import type { FakeStripeApi } from '../test/support/stripe-api.js';
import { measureRefusals, type RefusalSeries } from './authentication.js';
import { CONCURRENCY, MEASURED_CALLS, REFUSAL_CALLS, SIZE, WARMUP_CALLS } from './config.js';
import { measureFrontDoor } from './front-door.js';
import { measureHookRefusals } from './hook-refusals.js';
import type { PipelineHold } from './instrumentation.js';
import type { CallScenarioResult } from './measure-calls.js';
import { progress } from './output.js';
import { printBaseline, printHookRefusals, printRefusals, printRequests } from './report-calls.js';
import { runRequestBenchmarks } from './requests.js';
import {
  measureRawRequests,
  transactionSizesOf,
  measureWriteCeiling,
  type RawRequestLatency,
  type WriteCeiling,
} from './store-baseline.js';
import type { RequestCounter } from './support.js';

/**
 * Runs part 1 on the instrumented `service` (its checkout calls reach `stripeApi`) and prints it; pushes each failed
 * check onto `failures`. Returns the call scenarios (1 and 1d) and the refusal series (1b).
 */
export async function runCalls(
  {
    service,
    counter,
    pipeline,
    stripeApi,
  }: {
    service: LocalService;
    counter: RequestCounter;
    pipeline: PipelineHold;
    stripeApi: FakeStripeApi;
  },
  failures: string[],
): Promise<{ calls: CallScenarioResult[]; refusals: RefusalSeries[] }> {
  const calls = await runRequestBenchmarks({
    service,
    counter,
    pipeline,
    warmup: WARMUP_CALLS,
    calls: MEASURED_CALLS,
    progress,
  });
  const frontDoor = await measureFrontDoor({
    service,
    counter,
    pipeline,
    stripeApi,
    warmup: WARMUP_CALLS,
    calls: MEASURED_CALLS,
    progress,
  });
  calls.push(...frontDoor.results);
  for (const result of calls) {
    if (result.errors) failures.push(`${result.name}: ${result.errors} non-2xx answers`);
    if (result.aim && !result.aim.met)
      failures.push(
        `${result.name}: ${result.requestsPerCall.max} DynamoDB requests per call, aim ≤ ${result.aim.maxRequests}`,
      );
  }
  printRequests(calls);

  // 1b. Refused authentication: unknown token id vs wrong secret.
  const refusals = await measureRefusals({
    service,
    counter,
    existingToken: service.demoToken,
    warmup: WARMUP_CALLS,
    calls: REFUSAL_CALLS,
    progress,
  });
  for (const entry of refusals)
    if (entry.unexpected) failures.push(`${entry.surface}, ${entry.kind}: ${entry.unexpected} answers other than 401`);
  for (const surface of new Set(refusals.map((entry) => entry.surface))) {
    const [unknown, wrong] = refusals.filter((entry) => entry.surface === surface);
    if (unknown && wrong && unknown.requestsPerCall.typical !== wrong.requestsPerCall.typical) {
      failures.push(
        `${surface}: an unknown token id typically costs ${unknown.requestsPerCall.typical} DynamoDB requests, a wrong secret ${wrong.requestsPerCall.typical}`,
      );
    }
  }
  printRefusals(refusals);

  // 1e. Refused Stripe hook requests: a connected project beside an unknown one.
  progress(`refused Stripe hook requests: ${WARMUP_CALLS} warm-up + ${REFUSAL_CALLS} calls per project`);
  const hookRefusals = await measureHookRefusals({
    service,
    counter,
    connectedProjectId: frontDoor.projectId,
    warmup: WARMUP_CALLS,
    calls: REFUSAL_CALLS,
  });
  for (const entry of hookRefusals)
    if (entry.unexpected)
      failures.push(`Stripe hook, ${entry.project} project: ${entry.unexpected} answers other than 400`);
  printHookRefusals(hookRefusals);
  return { calls, refusals };
}

/**
 * 1c. The store's own figures: each raw request kind's latency (ms) and the write ceiling (requests/s) on `store`,
 * printed beside the round trips of `calls`.
 */
export async function runStoreFigures(
  store: Store,
  calls: CallScenarioResult[],
): Promise<{ raw: RawRequestLatency; storeCeiling: WriteCeiling }> {
  progress(
    `store: ${SIZE.rawSamples} raw requests of each kind, then ${SIZE.ceilingUpdates} concurrent conditional UpdateItems`,
  );
  const raw = await measureRawRequests(store, SIZE.rawSamples, transactionSizesOf(calls));
  const storeCeiling = await measureWriteCeiling(store, {
    updates: SIZE.ceilingUpdates,
    concurrency: CONCURRENCY,
  });
  printBaseline(raw, storeCeiling, calls);
  return { raw, storeCeiling };
}
