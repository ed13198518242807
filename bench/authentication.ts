/**
 * Benchmark 1b: refused authentication, an unknown token id beside a wrong secret (the
 * same work on both paths, so the answer's timing is no token-id existence oracle). Over HTTP against
 * the in-process local service: `GET /v1/teams/current` and an MCP `tools/call`, the two kinds of
 * bearer token alternating call by call. Each client IP may send 5 requests without a valid token per
 * minute (DESIGN D4), so calls come from many loopback source addresses (127.1.x.y for one kind,
 * 127.2.x.y for the other; Linux routes all of 127/8 to the loopback), each used for at most 4 calls.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { LocalService } from '../shared/local/service.js';
import { MCP_PROTOCOL_VERSION } from './requests.js';
import { summarize, type LatencySummary } from './measuring.js';
import type { RequestCounter } from './support.js';

/** Calls per source address (under the per-IP limit of 5 per minute, so every answer is a 401). */
const CALLS_PER_ADDRESS = 4;

/** Figures of one kind of refused token on one surface. */
export interface RefusalSeries {
  surface: 'REST GET /v1/teams/current' | 'MCP tools/call';
  kind: 'unknown token id' | 'wrong secret';
  latency: LatencySummary;
  /** DynamoDB commands per call: min, max and the most frequent count (`typical`). */
  requestsPerCall: { min: number; max: number; typical: number };
  /** Answers other than the expected 401. */
  unexpected: number;
  unexpectedSamples: string[];
}

/** Options of {@link measureRefusals}. */
export interface RefusalBenchmarkOptions {
  service: LocalService;
  counter: RequestCounter;
  /** A bearer string of an existing token of the demo team (its secret is replaced). */
  existingToken: string;
  warmup: number;
  calls: number;
  progress: (line: string) => void;
}

/** The most frequent value of a non-empty list (the smallest on a tie). */
function mostFrequent(values: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0][0];
}

/** A keep-alive connection pool per loopback source address. */
function addressPool() {
  const agents = new Map<string, Agent>();
  return {
    agent(address: string): Agent {
      let agent = agents.get(address);
      if (!agent) agents.set(address, (agent = new Agent({ localAddress: address })));
      return agent;
    },
    async close(): Promise<void> {
      await Promise.all([...agents.values()].map((agent) => agent.close()));
      agents.clear();
    },
  };
}

/**
 * Measures refused calls for both kinds of token on both surfaces, alternating the kinds call by call
 * (so drift affects both alike). Returns four series: latency (p50/p99) and DynamoDB requests per call.
 */
export async function measureRefusals(options: RefusalBenchmarkOptions): Promise<RefusalSeries[]> {
  const { service, counter } = options;
  const match = /^svc_live_([0-9A-Z]{26})_([0-9A-Za-z]+)$/.exec(options.existingToken);
  if (!match) throw new Error('existingToken is not a bearer token');
  const wrongSecret = `svc_live_${match[1]}_${'W'.repeat(44)}`;
  const unknownId = `svc_live_01ARZ3NDEKTSV4RRFFQ69G5FAV_${'W'.repeat(44)}`;
  const kinds = [
    { kind: 'unknown token id' as const, token: unknownId, octet: 1 },
    { kind: 'wrong secret' as const, token: wrongSecret, octet: 2 },
  ];
  const pool = addressPool();
  let nextAddress = 0;
  const surfaces = [
    {
      surface: 'REST GET /v1/teams/current' as const,
      send: (token: string, dispatcher: Agent) =>
        request(`${service.baseUrl}/v1/teams/current`, { dispatcher, headers: { authorization: `Bearer ${token}` } }),
    },
    {
      surface: 'MCP tools/call' as const,
      send: (token: string, dispatcher: Agent) =>
        request(service.mcpUrl, {
          dispatcher,
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            accept: 'application/json, text/event-stream',
            'content-type': 'application/json',
            'mcp-protocol-version': MCP_PROTOCOL_VERSION,
            'mcp-session-id': '00000000-0000-4000-8000-000000000000',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: 'list_projects', arguments: {} },
          }),
        }),
    },
  ];
  const results: RefusalSeries[] = [];
  try {
    for (const { surface, send } of surfaces) {
      options.progress(
        `refused authentication, ${surface}: ${options.warmup} warm-up + ${options.calls} calls per kind of token`,
      );
      const samples = kinds.map(() => ({
        latencies: [] as number[],
        requests: [] as number[],
        unexpected: 0,
        unexpectedSamples: [] as string[],
      }));
      const total = options.warmup + options.calls;
      for (let index = 0; index < total; index++) {
        const slot = Math.floor(nextAddress / CALLS_PER_ADDRESS);
        nextAddress++;
        for (const [position, { token, octet }] of kinds.entries()) {
          const address = `127.${octet}.${(slot >> 8) & 255}.${slot & 255}`;
          const agent = pool.agent(address);
          counter.reset();
          const started = performance.now();
          const response = await send(token, agent);
          const text = await response.body.text();
          const elapsed = performance.now() - started;
          const sample = samples[position];
          if (response.statusCode !== 401) {
            sample.unexpected++;
            if (sample.unexpectedSamples.length < 3)
              sample.unexpectedSamples.push(`${response.statusCode} ${text.slice(0, 120)}`);
          }
          if (index < options.warmup) continue;
          sample.latencies.push(elapsed);
          sample.requests.push(counter.snapshot().commands);
        }
      }
      for (const [position, { kind }] of kinds.entries()) {
        const sample = samples[position];
        results.push({
          surface,
          kind,
          latency: summarize(sample.latencies),
          requestsPerCall: {
            min: Math.min(...sample.requests),
            max: Math.max(...sample.requests),
            typical: mostFrequent(sample.requests),
          },
          unexpected: sample.unexpected,
          unexpectedSamples: sample.unexpectedSamples,
        });
      }
    }
  } finally {
    await pool.close();
  }
  return results;
}
