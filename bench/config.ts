/**
 * What `npm run bench` runs and at what size: `BENCH_SCALE` (`full` or `small`) picks the sizes of every part,
 * `BENCH_PARTS` the parts, and the constants below the rest (calls, concurrency, endpoints, aims).
 *
 * @module
 */

/** `BENCH_SCALE`: `full` (default; the sizes the issues name) or `small` (a quick run while developing). */
type BenchScale = 'full' | 'small';

/** Reads `BENCH_SCALE` (`full` or `small`, default `full`); throws on any other value. */
function benchScale(env: NodeJS.ProcessEnv = process.env): BenchScale {
  const value = env.BENCH_SCALE ?? 'full';
  if (value !== 'full' && value !== 'small') throw new Error(`BENCH_SCALE must be full or small, not ${value}`);
  return value;
}

/**
 * Reads `BENCH_PARTS` (a comma-separated subset of `known`; default every part). Throws on an unknown
 * name, naming the known ones.
 */
function benchParts<T extends string>(known: readonly T[], env: NodeJS.ProcessEnv = process.env): Set<T> {
  const value = env.BENCH_PARTS?.trim();
  if (!value) return new Set(known);
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  for (const name of names)
    if (!known.includes(name as T)) throw new Error(`BENCH_PARTS: unknown part ${name}; known: ${known.join(', ')}`);
  return new Set(names as T[]);
}

/** The sizes of each part, per `BENCH_SCALE` (`full`: the sizes the aims are set for). */
const SIZES = {
  full: {
    calls: 1_000,
    refusalCalls: 500,
    rawSamples: 1_000,
    ownRequestPairs: 200,
    ceilingUpdates: 10_000,
    transitions: 50,
    subscribers: 100_000,
    metricsSizes: [100, 100_000],
    pageSize: 100,
    renewals: 10_000,
    drainDeliveries: 10_000,
    latencyProjects: 200,
    neighbourEvents: 50,
    replayDeliveries: 10_000,
    broadcastRecipients: 2_000,
    importCustomers: 10_000,
    auditSubscriptions: 100_000,
  },
  small: {
    calls: 200,
    refusalCalls: 100,
    rawSamples: 200,
    ownRequestPairs: 50,
    ceilingUpdates: 2_000,
    transitions: 10,
    subscribers: 2_000,
    metricsSizes: [100, 10_000],
    pageSize: 20,
    renewals: 1_000,
    drainDeliveries: 1_000,
    latencyProjects: 30,
    neighbourEvents: 20,
    replayDeliveries: 1_000,
    broadcastRecipients: 200,
    importCustomers: 300,
    auditSubscriptions: 2_000,
  },
} as const;
/** `BENCH_SCALE` of this run. */
export const SCALE = benchScale();
/** The sizes of this run's parts ({@link SIZES} at {@link SCALE}). */
export const SIZE = SIZES[SCALE];
/** The parts to run (`BENCH_PARTS`, e.g. `subscribers,replay`; default all; the store's own figures always run). */
export const PARTS = benchParts([
  'calls',
  'webhooks',
  'replay',
  'subscribers',
  'metrics',
  'messages',
  'import',
  'audit',
  'audit-scale',
]);
// The audit at size takes a quarter of an hour: it runs only when named.
if (!process.env.BENCH_PARTS?.trim()) PARTS.delete('audit-scale');

/** Warm-up calls before each measured series. */
export const WARMUP_CALLS = 50;
/** Sequential calls measured per call scenario (and per metrics size). */
export const MEASURED_CALLS = SIZE.calls;
/**
 * Calls paired with rounds of one call's own requests sent raw (bench/own-requests.ts), after the measured calls: one
 * of each in turn, so that both meet the same moments of a shared machine.
 */
export const OWN_REQUEST_PAIRS = SIZE.ownRequestPairs;
/** Calls per kind of refused token and surface (4 series; fewer than MEASURED_CALLS to keep the run short). */
export const REFUSAL_CALLS = SIZE.refusalCalls;
/** The local dispatcher's concurrency (its default) and the ceilings' concurrency. */
export const CONCURRENCY = 32;
/** Dead deliveries seeded for replay-dead. */
export const REPLAY_DELIVERIES = SIZE.replayDeliveries;
/** replay-dead's `since_hours` window (h). */
export const REPLAY_SINCE_HOURS = 24;
/** Endpoint counts of the drain (1, 10 and 100). */
export const DRAIN_ENDPOINTS = [1, 10, 100] as const;
/** Endpoints of the commit → first attempt run (events committed one at a time: latency, not a backlog). */
export const LATENCY_ENDPOINTS = 1;
/** The noisy neighbour: A's dead endpoints (50 × 6 events = 300 deliveries). */
export const NEIGHBOUR_DEAD_ENDPOINTS = 50;
/** The noisy neighbour: A's events, each delivered to every dead endpoint. */
export const NEIGHBOUR_DEAD_EVENTS = 6;
/** Subscriber pages read (page 1 and page 100). */
export const LISTING_PAGES = 100;
/** Aim: DynamoDB requests of one transition beyond authentication. */
export const TRANSITION_AIM = 3;
/** Aim: DynamoDB requests per delivery, outbox to succeeded. */
export const DELIVERY_AIM = 3;
