/**
 * Benchmark 1d: the front door (DESIGN D26) — DynamoDB requests and latency of a join-page view
 * (`GET /join/{project_id}`, public) and of a checkout-session creation (`POST /v1/plans/{id}/checkout-sessions`,
 * which also calls Stripe: here the loopback fake of the tests, so the figure is the service's own work plus
 * one loopback round trip). The public pages' per-IP limit (60 a minute) bounds the join-page calls; a view's aim is
 * ≤ 3 DynamoDB requests (the per-IP counter, the team and project in one BatchGetItem, the plans in one Query).
 *
 * @module
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { LocalService } from '../shared/local/service.js';
import { RATE_LIMITS } from '../shared/limits/rate-limit.js';
import type { FakeStripeApi } from '../test/support/stripe-api.js';
import { callsMade, measureCalls, outcomeOf, type CallScenarioResult } from './measure-calls.js';
import type { RequestCounter } from './support.js';
import { mintTokens, tokensNeeded } from './tokens.js';

/** Options of {@link measureFrontDoor}. */
export interface FrontDoorOptions {
  service: LocalService;
  counter: RequestCounter;
  pipeline: { hold(): void; release(): Promise<void> };
  /** The fake Stripe API the service's `stripeApiBaseUrl` points at. */
  stripeApi: FakeStripeApi;
  warmup: number;
  calls: number;
  progress: (line: string) => void;
}

/**
 * Sets up a web project of the demo team connected to (fake) Stripe with a synced monthly plan and a free
 * plan, then measures the two front-door calls. Join-page calls are capped to fit the per-IP limit.
 * Returns the figures and the project (connected to Stripe, for the hook refusals of 1e).
 */
export async function measureFrontDoor(
  options: FrontDoorOptions,
): Promise<{ results: CallScenarioResult[]; projectId: string }> {
  const { service, counter, pipeline, stripeApi } = options;
  const [owner] = await mintTokens(service.store, service.demoTeamId, 1, 'bench front door');
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${owner.token}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as Record<string, unknown>;
    if (!response.ok)
      throw new Error(`${method} ${path}: HTTP ${response.status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  const project = await api('POST', '/v1/projects', {
    name: 'Front door',
    platform_type: 'web',
    description: 'Bench project with a join page.',
  });
  const secretKey = `rk_test_${randomBytes(16).toString('hex')}`;
  stripeApi.addKey(secretKey);
  await api('PUT', `/v1/projects/${String(project.id)}/payment-provider`, {
    provider: 'stripe',
    secret_key: secretKey,
    webhook_secret: `whsec_${randomBytes(24).toString('hex')}`,
  });
  const monthly = await api('POST', `/v1/projects/${String(project.id)}/plans`, {
    name: 'Monthly',
    amount: 900,
    currency: 'EUR',
    interval: 'month',
  });
  await api('POST', `/v1/projects/${String(project.id)}/plans`, {
    name: 'Free',
    amount: 0,
    currency: 'EUR',
    interval: 'month',
  });
  const afterCall = async () => {
    await pipeline.release();
    pipeline.hold();
  };
  const results: CallScenarioResult[] = [];
  pipeline.hold();
  try {
    const joinWarmup = Math.min(options.warmup, 5);
    const joinCalls = Math.min(options.calls, RATE_LIMITS['public-pages'].limit - joinWarmup - 2);
    options.progress(`GET /join/{project_id}: ${joinWarmup} warm-up + ${joinCalls} calls (the per-IP limit)`);
    results.push(
      await measureCalls({
        name: 'GET /join/{project_id} (join page)',
        warmup: joinWarmup,
        calls: joinCalls,
        tokens: 0,
        counter,
        aimMaxRequests: 3,
        afterCall,
        call: async () => outcomeOf(await fetch(`${service.baseUrl}/join/${String(project.id)}`), 200),
      }),
    );

    const total = callsMade(options.warmup, options.calls);
    const tokens = await mintTokens(
      service.store,
      service.demoTeamId,
      tokensNeeded(total, RATE_LIMITS.rest.limit),
      'bench checkout',
    );
    options.progress(
      `POST /v1/plans/{id}/checkout-sessions: ${tokens.length} tokens, ${options.warmup} warm-up + ${options.calls} calls`,
    );
    results.push(
      await measureCalls({
        name: 'POST /v1/plans/{id}/checkout-sessions',
        warmup: options.warmup,
        calls: options.calls,
        tokens: tokens.length,
        counter,
        afterCall,
        store: service.store,
        call: async (index) => {
          const token = tokens[(index + tokens.length * total) % tokens.length].token;
          const response = await fetch(`${service.baseUrl}/v1/plans/${String(monthly.id)}/checkout-sessions`, {
            method: 'POST',
            headers: {
              Authorization: `Bearer ${token}`,
              'Content-Type': 'application/json',
              'Idempotency-Key': randomUUID(),
            },
            body: JSON.stringify({ customer_email: `fan-${index}@example.com` }),
          });
          return outcomeOf(response, 201);
        },
      }),
    );
    return { results, projectId: String(project.id) };
  } finally {
    await pipeline.release();
  }
}
