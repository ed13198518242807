/**
 * Benchmark 1e: refused Stripe hook requests (DESIGN D22), a forged `Stripe-Signature` for a project
 * connected to Stripe beside one for a project that does not exist, alternating call by call over HTTP.
 * Both open one sealed credential (the unknown project a decoy), so the answer's timing is no
 * existence oracle; the figures show the two paths side by side (tests assert the work, not the time).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { LocalService } from '../shared/local/service.js';
import { summarize, type LatencySummary } from './measuring.js';
import type { RequestCounter } from './support.js';

/** Figures of one path of refused hook requests. */
export interface HookRefusalSeries {
  project: 'connected to Stripe' | 'unknown';
  latency: LatencySummary;
  /** DynamoDB commands per call (min and max). */
  requestsPerCall: { min: number; max: number };
  /** Answers other than the expected 400. */
  unexpected: number;
}

/**
 * Posts `warmup + calls` forged events to each of the two projects' Stripe hooks, alternating, and returns
 * the latency and DynamoDB requests of the measured calls per path.
 */
export async function measureHookRefusals(options: {
  service: LocalService;
  counter: RequestCounter;
  connectedProjectId: string;
  warmup: number;
  calls: number;
}): Promise<HookRefusalSeries[]> {
  const { service, counter } = options;
  const body = JSON.stringify({
    id: 'evt_forged',
    object: 'event',
    type: 'checkout.session.completed',
    created: Math.floor(Date.now() / 1000),
    data: { object: {} },
  });
  const paths = [
    { project: 'connected to Stripe' as const, path: `/hooks/stripe/${options.connectedProjectId}` },
    { project: 'unknown' as const, path: `/hooks/stripe/${randomUUID()}` },
  ];
  const samples = paths.map(() => ({ latencies: [] as number[], requests: [] as number[], unexpected: 0 }));
  for (let index = 0; index < options.warmup + options.calls; index++) {
    for (const [position, { path }] of paths.entries()) {
      counter.reset();
      const started = performance.now();
      const response = await fetch(`${service.baseUrl}${path}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`,
        },
        body,
      });
      await response.text();
      const elapsed = performance.now() - started;
      if (response.status !== 400) samples[position].unexpected++;
      if (index < options.warmup) continue;
      samples[position].latencies.push(elapsed);
      samples[position].requests.push(counter.snapshot().commands);
    }
  }
  return paths.map(({ project }, position) => ({
    project,
    latency: summarize(samples[position].latencies),
    requestsPerCall: { min: Math.min(...samples[position].requests), max: Math.max(...samples[position].requests) },
    unexpected: samples[position].unexpected,
  }));
}
