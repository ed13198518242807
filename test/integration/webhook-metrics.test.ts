/**
 * Delivery metrics of the webhook pipeline (DESIGN D23): the dispatcher reports each
 * attempt (attempted, succeeded or failed, latency in milliseconds) and each dead delivery through the
 * runtime's `DeliveryMetrics`; on AWS that is Powertools Metrics, flushed as one EMF document per
 * invocation. Real dispatcher against DynamoDB Local, a scripted transport, a Powertools `Metrics`
 * instance read through its own `serializeMetrics()` (the EMF document it would print).
 */
import { randomUUID } from 'node:crypto';
import { Metrics } from '@aws-lambda-powertools/metrics';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { METRICS_NAMESPACE, powertoolsDeliveryMetrics, publishingMetrics } from '../../shared/aws/metrics.js';
import type { Principal } from '../../shared/auth/principal.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { fanOutEvent } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { AttemptResult, WebhookTransport } from '../../shared/domain/webhook-deliveries/transport/port.js';
import { createWebhookEndpoint, deleteWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import type { StoredEvent } from '../../shared/events/outbox.js';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

const OK: AttemptResult = {
  ok: true,
  status: 200,
  failure_kind: null,
  failure_message: null,
  duration_ms: 17,
  response_body: 'thanks',
  remote_address: '203.0.113.10',
};
const HTTP_500: AttemptResult = {
  ok: false,
  status: 500,
  failure_kind: 'http_status',
  failure_message: 'HTTP 500',
  duration_ms: 42,
  response_body: 'boom',
  remote_address: '203.0.113.10',
};

interface Context {
  runtime: TestRuntime;
  metrics: Metrics;
  principal: Principal;
  /** Results the transport gives, in order. */
  script: AttemptResult[];
}

let ctx: Context;

beforeEach(async () => {
  const script: AttemptResult[] = [];
  const transport: WebhookTransport = { send: async () => ({ ...script.shift()! }) };
  const clock = testClock();
  const runtime = await createTestRuntime({ clock, transport });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'membership-service-test' });
  runtime.metrics = powertoolsDeliveryMetrics(metrics);
  const { principal } = await seedTeam(runtime.store, clock);
  await relayOutbox(runtime, clock.nowMs()); // the team's own `team.created`, to no endpoint
  runtime.drain();
  ctx = { runtime, metrics, principal, script };
});

afterEach(() => {
  vi.restoreAllMocks();
});

/**
 * `count` endpoints subscribed to `project.created` and one new project, fanned out: the attempt-1
 * message of each of the event's `count` deliveries.
 */
async function queuedAttempts(count: number): Promise<DeliveryMessage[]> {
  for (let index = 0; index < count; index++) {
    await createWebhookEndpoint(ctx.runtime, ctx.principal, {
      name: `hook ${randomUUID().slice(0, 8)}`,
      url: 'https://receiver.example/hooks',
      events: ['project.created'],
    });
  }
  const project = await createProject(ctx.runtime, ctx.principal, {
    name: `Project ${randomUUID().slice(0, 8)}`,
    platform_type: 'discord',
  });
  const { items } = await ctx.runtime.store.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': `TEAM#${ctx.principal.teamId}`, ':prefix': 'EVENT#' },
  });
  const event = items.find(
    (item) => (item.data as { project?: { id: string } }).project?.id === project.id,
  ) as unknown as StoredEvent;
  expect(await fanOutEvent(ctx.runtime, event)).toBe(count);
  const { queued } = ctx.runtime.drain();
  expect(queued).toHaveLength(count);
  return queued.map((entry) => entry.message);
}

/** The metric values of the EMF document the instance would print now, by name. */
function emitted(): Record<string, unknown> {
  const document = ctx.metrics.serializeMetrics() as unknown as Record<string, unknown> & {
    _aws: { CloudWatchMetrics: Array<{ Namespace: string; Metrics: Array<{ Name: string; Unit: string }> }> };
  };
  const [directive] = document._aws.CloudWatchMetrics;
  expect(directive.Namespace).toBe(METRICS_NAMESPACE);
  return Object.fromEntries(
    directive.Metrics.map((metric) => [metric.Name, { unit: metric.Unit, value: document[metric.Name] }]),
  );
}

describe('delivery metrics (DESIGN D23)', () => {
  it('counts a successful attempt as attempted and succeeded, with its latency in milliseconds', async () => {
    const [message] = await queuedAttempts(1);
    ctx.script.push(OK);
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');
    expect(emitted()).toEqual({
      DeliveriesAttempted: { unit: 'Count', value: 1 },
      DeliveriesSucceeded: { unit: 'Count', value: 1 },
      DeliveryAttemptLatency: { unit: 'Milliseconds', value: OK.duration_ms },
    });
  });

  it('counts a failed attempt as attempted and failed', async () => {
    const [message] = await queuedAttempts(1);
    ctx.script.push(HTTP_500);
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('retry_scheduled');
    expect(emitted()).toEqual({
      DeliveriesAttempted: { unit: 'Count', value: 1 },
      DeliveriesFailed: { unit: 'Count', value: 1 },
      DeliveryAttemptLatency: { unit: 'Milliseconds', value: HTTP_500.duration_ms },
    });
  });

  it('adds up several attempts of one invocation, and counts a delivery made dead without an attempt', async () => {
    const [first, second, third] = await queuedAttempts(3);
    ctx.script.push(OK, HTTP_500);
    expect(await processDeliveryMessage(ctx.runtime, first)).toBe('succeeded');
    expect(await processDeliveryMessage(ctx.runtime, second)).toBe('retry_scheduled');
    // The third delivery's endpoint is deleted before its attempt: the delivery is dead-lettered, no POST.
    await deleteWebhookEndpoint(
      ctx.runtime,
      ctx.principal,
      (await getDelivery(ctx.runtime, ctx.principal, third.delivery_id)).endpoint_id,
    );
    expect(await processDeliveryMessage(ctx.runtime, third)).toBe('endpoint_disabled');
    expect(ctx.script).toEqual([]);
    expect(emitted()).toEqual({
      DeliveriesAttempted: { unit: 'Count', value: [1, 1] },
      DeliveriesSucceeded: { unit: 'Count', value: 1 },
      DeliveriesFailed: { unit: 'Count', value: 1 },
      DeliveryAttemptLatency: { unit: 'Milliseconds', value: [OK.duration_ms, HTTP_500.duration_ms] },
      DeliveriesDead: { unit: 'Count', value: 1 },
    });
  });

  it('flushes once per invocation: one EMF line on stdout with the counts, then an empty store; nothing when nothing was counted', async () => {
    const [message] = await queuedAttempts(1);
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const handler = publishingMetrics(ctx.metrics, async (queued: DeliveryMessage) =>
      processDeliveryMessage(ctx.runtime, queued),
    );
    ctx.script.push(OK);
    expect(await handler(message, {} as never)).toBe('succeeded');
    expect(await handler(message, {} as never)).toBe('skipped'); // a duplicate message: no attempt, nothing to flush
    vi.restoreAllMocks();
    const emf = lines
      .filter((line) => line.includes('"_aws"'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(emf).toHaveLength(1);
    expect(emf[0]).toMatchObject({
      DeliveriesAttempted: 1,
      DeliveriesSucceeded: 1,
      DeliveryAttemptLatency: OK.duration_ms,
      service: 'membership-service-test',
    });
    expect(ctx.metrics.hasStoredMetrics()).toBe(false);
  });

  it('is silent with POWERTOOLS_METRICS_DISABLED=true', async () => {
    vi.stubEnv('POWERTOOLS_METRICS_DISABLED', 'true');
    const silent = new Metrics({ namespace: METRICS_NAMESPACE, serviceName: 'membership-service-test' });
    vi.unstubAllEnvs();
    ctx.runtime.metrics = powertoolsDeliveryMetrics(silent);
    const [message] = await queuedAttempts(1);
    const lines: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    ctx.script.push(OK);
    const handler = publishingMetrics(silent, async (queued: DeliveryMessage) =>
      processDeliveryMessage(ctx.runtime, queued),
    );
    expect(await handler(message, {} as never)).toBe('succeeded');
    vi.restoreAllMocks();
    expect(lines.filter((line) => line.includes('"_aws"'))).toEqual([]);
    expect(silent.hasStoredMetrics()).toBe(false);
  });
});
