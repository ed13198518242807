/**
 * A scripted agent job with the official MCP SDK client over Streamable HTTP to the
 * local service (in-process, 127.0.0.1), with a bearer token: create a project, a plan, a batch of access
 * codes and a webhook endpoint to a loopback HTTPS receiver; redeem a code with the one REST call (no tool of
 * the interface redeems: `redeemAccessCode` is REST only); pause and resume the subscription the code
 * created; list the payments and the activity log — all through tools. Then the job's events arrive at the
 * receiver, each signed (the receiver's own check, test/support/signature.ts) and valid against the schema the
 * service publishes at `GET /webhook-events.json`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { WebhookEventsDocument } from '../../shared/catalogues/resources.js';
import { WEBHOOK_EVENT_NAMES } from '../../shared/catalogues/webhook-events.js';
import type { LocalService } from '../../shared/local/service.js';
import { compileEventDataValidators, openApiWebhookValidators, expectPublishedEvent } from '../support/events.js';
import { startRecordingReceiver, type RecordingReceiver } from '../support/https-receiver.js';
import { startTestService } from '../support/local-service.js';
import { checkSignature } from '../support/signature.js';
import { seedTeam } from '../support/store.js';

let receiver: RecordingReceiver;
let service: LocalService;
let team: Awaited<ReturnType<typeof seedTeam>>;
let client: Client;

beforeAll(async () => {
  receiver = await startRecordingReceiver();
  service = await startTestService({ extraCaPem: [receiver.caPem], allowPrivateTargets: true });
  team = await seedTeam(service.store, service.runtime.clock);
  client = new Client({ name: 'scripted-agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(service.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${team.token}` } },
    }),
  );
});

afterAll(async () => {
  await client?.close();
  await service?.stop();
  await receiver?.close();
});

/** Calls a tool as the agent; asserts it succeeded and returns its structured result (the REST response's body). */
async function tool(name: string, args: Record<string, unknown>): Promise<any> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBeFalsy();
  return result.structuredContent;
}

/** The event families the job's endpoint subscribes to. */
const JOB_FAMILIES = ['subscription', 'access_code'];

describe('a scripted agent job over MCP', () => {
  it('creates a project, plan, codes and an endpoint, redeems a code, pauses and resumes, lists payments and activity; the events arrive signed', async () => {
    const project = await tool('create_project', { name: 'Agent book club', platform_type: 'web' });
    const plan = await tool('create_plan', {
      project_id: project.id,
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    const generated = await tool('generate_access_codes', {
      project_id: project.id,
      plan_id: plan.id,
      count: 3,
      prefix: 'AGENT',
      access_days: 30,
    });
    expect(generated.codes).toHaveLength(3);
    const events = WEBHOOK_EVENT_NAMES.filter((name) => JOB_FAMILIES.includes(name.split('.')[0]));
    const endpoint = await tool('create_webhook_endpoint', { name: 'agent hook', url: receiver.url, events });
    expect(endpoint.secret).toMatch(/^whsec_/);

    // The one REST call: a subscriber redeems a code (lower case, without dashes: as typed).
    const code = generated.codes[0].code as string;
    const response = await fetch(`${service.baseUrl}/v1/projects/${project.id}/access-codes/redeem`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${team.token}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': crypto.randomUUID(),
      },
      body: JSON.stringify({ code: code.replaceAll('-', '').toLowerCase(), subscriber: { display_name: 'Ada' } }),
    });
    const redeemed = await response.json();
    expect(response.status, JSON.stringify(redeemed)).toBe(201);
    const subscriptionId = redeemed.subscription.id as string;
    expect(redeemed.subscription).toMatchObject({ status: 'active', plan_id: plan.id, source: 'access_code' });
    expect(redeemed.access_code).toMatchObject({ id: generated.codes[0].id, status: 'exhausted', times_redeemed: 1 });

    expect(await tool('pause_subscription', { id: subscriptionId, reason: 'travelling' })).toMatchObject({
      id: subscriptionId,
      status: 'paused',
      previous_status: 'active',
    });
    expect(await tool('resume_subscription', { id: subscriptionId })).toMatchObject({
      id: subscriptionId,
      status: 'active',
      previous_status: 'paused',
    });
    expect(await tool('get_subscription', { id: subscriptionId })).toMatchObject({ status: 'active' });
    // An access code's subscription is free: no payment.
    expect(await tool('list_payments', { project_id: project.id })).toEqual({ data: [], next_cursor: null });
    const activity = await tool('get_activity_log', { token_id: team.id, limit: 50 });
    const operations = activity.data.map(
      (entry: { surface: string; operation: string; outcome: string }) =>
        `${entry.surface} ${entry.operation} ${entry.outcome}`,
    );
    expect(operations).toEqual(
      expect.arrayContaining([
        'mcp create_project ok',
        'mcp create_plan ok',
        'mcp generate_access_codes ok',
        'mcp create_webhook_endpoint ok',
        'rest redeemAccessCode ok',
        'mcp pause_subscription ok',
        'mcp resume_subscription ok',
      ]),
    );

    // The job's events since the endpoint exists, each once: the redemption (the code's only use, so it
    // also expired), the pause and the resume.
    const expected = [
      'access_code.expired',
      'access_code.redeemed',
      'subscription.created',
      'subscription.paused',
      'subscription.resumed',
    ];
    await vi.waitFor(
      () => expect(receiver.deliveries.map((delivery) => delivery.envelope.type).sort()).toEqual(expected),
      { timeout: 30_000, interval: 100 },
    );
    const published = compileEventDataValidators(
      (await (await fetch(`${service.baseUrl}/webhook-events.json`)).json()) as WebhookEventsDocument,
    );
    const openApiWebhooks = openApiWebhookValidators(await (await fetch(`${service.baseUrl}/openapi.json`)).json());
    for (const delivery of receiver.deliveries) {
      const { envelope, headers } = delivery;
      expect(
        checkSignature({
          header: headers['svc-signature'],
          rawBody: delivery.rawBody,
          secret: endpoint.secret,
          nowSeconds: delivery.receivedAtSeconds,
        }),
        envelope.type,
      ).toBeNull();
      expect(headers['svc-event-name']).toBe(envelope.type);
      expect(envelope.project_id).toBe(project.id);
      expectPublishedEvent(envelope, published);
      const validate = openApiWebhooks(envelope.type);
      expect(
        validate(envelope),
        `${envelope.type} against openapi.json webhooks: ${JSON.stringify(validate.errors)}`,
      ).toBe(true);
      if (envelope.type.startsWith('subscription.')) expect(envelope.data.subscription.id).toBe(subscriptionId);
      else expect(envelope.data.access_code.id).toBe(generated.codes[0].id);
    }
    const paused = receiver.deliveries.find((delivery) => delivery.envelope.type === 'subscription.paused')!.envelope;
    expect(paused.data.subscription.status).toBe('paused');
    // Both published descriptions refuse an envelope whose data lacks what its event carries (the checks above are not
    // vacuous).
    const tampered = { ...paused, data: { ...paused.data, subscription: { id: subscriptionId } } };
    expect(published.get('subscription.paused')!(tampered.data)).toBe(false);
    expect(openApiWebhooks('subscription.paused')(tampered)).toBe(false);
    // The codes themselves never travel in an event.
    for (const { code: secretCode } of generated.codes)
      expect(receiver.deliveries.map((delivery) => delivery.rawBody).join('\n')).not.toContain(secretCode);
  });
});
