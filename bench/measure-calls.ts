/**
 * Measuring sequential calls of one scenario: latency (ms), the DynamoDB requests each call makes and their time,
 * throughput and errors, the DynamoDB request counter reset before each call.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { OWN_REQUEST_PAIRS } from './config.js';
import { summarize, type LatencySummary } from './measuring.js';
import { captureCall, replayOwnRequests, type PairedOwnRequests } from './own-requests.js';
import { rawRequestSet, summarizeRawRounds, timeRawRound } from './store-baseline.js';
import type { RequestCounter } from './support.js';
import type { Store } from '../shared/store/store.js';

/** Outcome of one measured call. */
export interface CallOutcome {
  ok: boolean;
  status: number;
  /** Short description of a failure (first characters of the body). */
  detail?: string;
}

/** Figures of one call scenario. */
export interface CallScenarioResult {
  name: string;
  warmup: number;
  calls: number;
  tokens: number;
  latency: LatencySummary;
  /** Calls per second over the measured loop (sequential, one in flight). */
  throughputPerSecond: number;
  /** Foreground DynamoDB commands per call (the request path). */
  requestsPerCall: { min: number; max: number; mean: number };
  /** Foreground HTTP attempts to DynamoDB per call (SDK retries included). */
  attemptsPerCall: { min: number; max: number };
  /** Distinct command mixes seen, e.g. `GetCommand×1 + UpdateCommand×1` → how many calls had it. */
  commandMixes: Record<string, number>;
  /** Foreground commands by name summed over the measured calls (divide by `calls`). */
  commandTotals: Record<string, number>;
  /** Foreground TransactWriteItems over the measured calls by item count: size → how many (divide by `calls`). */
  transactionTotals: Record<string, number>;
  /**
   * p50 over the calls of a call's DynamoDB time (ms): the summed durations of the requests it makes, each
   * timed in the call at the store's client (the SDK's work and the round trip). `latency.p50` ÷ this is
   * the call's latency ratio.
   */
  dynamoDbMs: number;
  /** p50 over the calls of the time a call spends outside its DynamoDB requests (ms). */
  outsideDynamoDbMs: number;
  /** Background DynamoDB commands (local outbox relay, fan-out, sweeper) per measured call, on average. */
  backgroundPerCall: number;
  /** Background commands by label over the measured loop. */
  background: Record<string, number>;
  /** Non-2xx answers (or MCP tool errors) during warm-up and measurement. */
  errors: number;
  errorSamples: string[];
  /** The aim printed beside the figure, when there is one. */
  aim: { maxRequests: number; met: boolean } | null;
  /** One more call's own requests sent again alone (see own-requests.ts); null without `document` or if it failed. */
  ownRequests: PairedOwnRequests | null;
}

/**
 * The calls {@link measureCalls} makes of a scenario with `document`: the warm-up and measured calls, one captured call
 * and the calls paired with its own requests sent raw (to size the scenario's tokens by the rate limits).
 */
export function callsMade(warmup: number, calls: number): number {
  return warmup + calls + 1 + OWN_REQUEST_PAIRS;
}

/** Options of {@link measureCalls}. */
export interface MeasureCallsOptions {
  name: string;
  warmup: number;
  calls: number;
  tokens: number;
  counter: RequestCounter;
  /** Upper bound of DynamoDB requests per call to print beside the figure. */
  aimMaxRequests?: number;
  /** Performs call number `index` (warm-up calls first, with negative indexes). */
  call: (index: number) => Promise<CallOutcome>;
  /**
   * Runs after each call, outside its latency and the loop's time (the held pipeline's work, counted as the call's
   * background).
   */
  afterCall?: () => Promise<void>;
  /**
   * The service's store: one more call is captured, and its own requests are sent again alone through its document
   * client, each round followed by a call ({@link OWN_REQUEST_PAIRS}) and one raw request of each kind.
   */
  store?: Store;
}

function mixOf(byCommand: Record<string, number>): string {
  const names = Object.keys(byCommand).sort();
  return names.length
    ? names.map((name) => `${name.replace(/Command$/, '')}×${byCommand[name]}`).join(' + ')
    : '(none)';
}

/**
 * Runs `warmup` calls, then `calls` sequential calls, resetting the DynamoDB counter before each
 * measured call and reading it once the response has been read and `afterCall` has run. Returns latency
 * (p50/p99), the DynamoDB time of a call and the rest (p50s), throughput, requests per call
 * (min/max/mean), the command mixes seen and the errors.
 */
export async function measureCalls(options: MeasureCallsOptions): Promise<CallScenarioResult> {
  let errors = 0;
  const errorSamples: string[] = [];
  const noteError = (outcome: CallOutcome) => {
    errors++;
    if (errorSamples.length < 5) errorSamples.push(`${outcome.status} ${outcome.detail ?? ''}`.trim());
  };
  for (let index = 0; index < options.warmup; index++) {
    const outcome = await options.call(-1 - index);
    await options.afterCall?.();
    if (!outcome.ok) noteError(outcome);
  }
  const latencies: number[] = [];
  const requests: number[] = [];
  const attempts: number[] = [];
  const mixes: Record<string, number> = {};
  const commandTotals: Record<string, number> = {};
  const transactionTotals: Record<string, number> = {};
  const dynamoDb: number[] = [];
  const outside: number[] = [];
  const background: Record<string, number> = {};
  let afterCallsMs = 0;
  const loopStarted = performance.now();
  for (let index = 0; index < options.calls; index++) {
    options.counter.reset();
    const started = performance.now();
    const outcome = await options.call(index);
    latencies.push(performance.now() - started);
    if (options.afterCall) {
      const settling = performance.now();
      await options.afterCall();
      afterCallsMs += performance.now() - settling;
    }
    const counts = options.counter.snapshot();
    requests.push(counts.commands);
    attempts.push(counts.attempts);
    const mix = mixOf(counts.byCommand);
    mixes[mix] = (mixes[mix] ?? 0) + 1;
    for (const [name, count] of Object.entries(counts.byCommand))
      commandTotals[name] = (commandTotals[name] ?? 0) + count;
    for (const size of counts.transactionSizes) transactionTotals[size] = (transactionTotals[size] ?? 0) + 1;
    const dynamoDbMs = Object.values(counts.durations)
      .flat()
      .reduce((total, ms) => total + ms, 0);
    dynamoDb.push(dynamoDbMs);
    outside.push(latencies.at(-1)! - dynamoDbMs);
    for (const [label, count] of Object.entries(counts.background))
      background[label] = (background[label] ?? 0) + count;
    if (!outcome.ok) noteError(outcome);
  }
  const loopMs = performance.now() - loopStarted - afterCallsMs;
  let ownRequests: PairedOwnRequests | null = null;
  if (options.store) {
    const { document } = options.store;
    let outcome: CallOutcome | undefined;
    const captured = await captureCall(document, async () => (outcome = await options.call(options.calls)));
    await options.afterCall?.();
    if (outcome?.ok) {
      // Each round of the captured call's own requests is followed by a call and one raw request of each kind, so all
      // three meet the same moments.
      const paired: number[] = [];
      const rawRounds: Awaited<ReturnType<typeof timeRawRound>>[] = [];
      const rawSet = await rawRequestSet(options.store, Object.keys(transactionTotals).map(Number));
      let index = options.calls + 1;
      const raw = await replayOwnRequests(document, captured, OWN_REQUEST_PAIRS, async () => {
        const started = performance.now();
        const pairedOutcome = await options.call(index++);
        paired.push(performance.now() - started);
        await options.afterCall?.();
        if (!pairedOutcome.ok) noteError(pairedOutcome);
        rawRounds.push(await timeRawRound(rawSet));
      });
      ownRequests = { ...raw, pairedCallP50: summarize(paired).p50, pairedRawPrices: summarizeRawRounds(rawRounds) };
    }
  }
  const backgroundTotal = Object.values(background).reduce((total, count) => total + count, 0);
  const requestsPerCall = {
    min: Math.min(...requests),
    max: Math.max(...requests),
    mean: requests.reduce((a, b) => a + b, 0) / requests.length,
  };
  return {
    name: options.name,
    warmup: options.warmup,
    calls: options.calls,
    tokens: options.tokens,
    latency: summarize(latencies),
    throughputPerSecond: options.calls / (loopMs / 1000),
    requestsPerCall,
    attemptsPerCall: { min: Math.min(...attempts), max: Math.max(...attempts) },
    commandMixes: mixes,
    commandTotals,
    transactionTotals,
    dynamoDbMs: summarize(dynamoDb).p50,
    outsideDynamoDbMs: summarize(outside).p50,
    backgroundPerCall: backgroundTotal / options.calls,
    background,
    errors,
    errorSamples,
    aim:
      options.aimMaxRequests === undefined
        ? null
        : { maxRequests: options.aimMaxRequests, met: requestsPerCall.max <= options.aimMaxRequests },
    ownRequests,
  };
}

/** The outcome of a response that should have `expected` status (the body read either way). */
export async function outcomeOf(response: Response, expected: number): Promise<CallOutcome> {
  const text = await response.text();
  if (response.status === expected) return { ok: true, status: response.status };
  return { ok: false, status: response.status, detail: text.slice(0, 200) };
}
