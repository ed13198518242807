/**
 * The webhook delivery state machine (interface "States" → "Webhook delivery" and "Webhook endpoint",
 * "Events" → "Delivery rules", "Webhook trust"; DESIGN D6–D10) against DynamoDB Local, with a scripted
 * fake transport and a manual clock. The runtime's queue and scheduler only record messages
 * (test/support/store.ts); the tests hand them to `processDeliveryMessage` themselves, so every
 * retry wait is checked without sleeping.
 */

import { describe, expect, it } from 'vitest';
import { createProject } from '../../shared/domain/projects/creation.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../../shared/domain/plans/schema.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { CreateSubscriberRequest } from '../../shared/domain/subscribers/schema.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import { CreateSubscriptionRequest } from '../../shared/domain/subscriptions/schema.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { redactPayload } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { rotateWebhookEndpointSecret } from '../../shared/domain/webhook-endpoints/changes.js';
import type { WebhookRequest } from '../../shared/domain/webhook-deliveries/transport/port.js';
import { checkSignature } from '../support/signature.js';
import {
  OK,
  ctx,
  newEndpoint,
  oneDelivery,
  runAll,
  seedTeamMember,
  useWebhookDeliveryFixture,
} from '../support/fixtures/webhook-delivery.js';
import { HOUR_MS } from '../../shared/clock.js';

useWebhookDeliveryFixture();

// ---------------------------------------------------------------------------------------------------
// Signing (interface "Webhook trust", DESIGN D8)
// ---------------------------------------------------------------------------------------------------

describe('signing and rotation', () => {
  function signatureParts(request: WebhookRequest): Record<string, string> {
    return Object.fromEntries(
      request.headers['SVC-Signature'].split(',').map((part) => part.split('=', 2) as [string, string]),
    );
  }

  async function deliverOne(): Promise<WebhookRequest> {
    const { message } = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');
    return ctx.fake.requests.at(-1)!;
  }

  /**
   * Whether a receiver holding `secret` accepts `request` at the manual clock's time, by the one
   * independent receiver check (test/support/signature.ts). Any rejection but a wrong signature fails.
   */
  async function accepts(request: WebhookRequest, secret: string): Promise<boolean> {
    const rejection = checkSignature({
      header: request.headers['SVC-Signature'],
      rawBody: request.body,
      secret,
      nowSeconds: Math.floor(ctx.clock.nowMs() / 1000),
    });
    if (rejection === 'signature mismatch') return false;
    if (rejection) throw new Error(`receiver rejected the delivery: ${rejection}`);
    return true;
  }

  it('dashboard rotation signs with v1 (new) and v0 (old) for 24 hours, then v1 only; API rotation signs v1 only', async () => {
    ctx.fake.setFallback(OK);
    const created = await newEndpoint();
    const original = created.secret;

    const before = await deliverOne();
    expect(Object.keys(signatureParts(before))).toEqual(['t', 'v1']);
    expect(await accepts(before, original)).toBe(true);

    const rotated = await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'dashboard');
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(original);

    const dual = await deliverOne();
    const parts = signatureParts(dual);
    expect(Object.keys(parts)).toEqual(['t', 'v1', 'v0']);
    expect(dual.headers['SVC-Signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v0=[0-9a-f]{64}$/);
    expect(Number(parts.t)).toBe(Math.floor(ctx.clock.nowMs() / 1000));
    expect(await accepts(dual, rotated.secret)).toBe(true);
    expect(await accepts(dual, original)).toBe(true);
    expect(await accepts(dual, 'whsec_not-the-secret')).toBe(false);
    // v1 belongs to the new secret, v0 to the old one.
    expect(
      await accepts(
        { ...dual, headers: { ...dual.headers, 'SVC-Signature': `t=${parts.t},v1=${parts.v1}` } },
        rotated.secret,
      ),
    ).toBe(true);
    expect(
      await accepts(
        { ...dual, headers: { ...dual.headers, 'SVC-Signature': `t=${parts.t},v0=${parts.v0}` } },
        original,
      ),
    ).toBe(true);
    expect(
      await accepts(
        { ...dual, headers: { ...dual.headers, 'SVC-Signature': `t=${parts.t},v1=${parts.v1}` } },
        original,
      ),
    ).toBe(false);

    // Still dual just before the 24 h window closes.
    ctx.clock.advance(24 * HOUR_MS - 1_000);
    expect(Object.keys(signatureParts(await deliverOne()))).toEqual(['t', 'v1', 'v0']);

    // After 24 hours: v1 with the new secret only.
    ctx.clock.advance(2_000);
    const after = await deliverOne();
    expect(Object.keys(signatureParts(after))).toEqual(['t', 'v1']);
    expect(await accepts(after, rotated.secret)).toBe(true);
    expect(await accepts(after, original)).toBe(false);

    // API rotation: v1 only, at once, with the newest secret.
    const apiRotated = await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'api');
    const viaApi = await deliverOne();
    expect(Object.keys(signatureParts(viaApi))).toEqual(['t', 'v1']);
    expect(await accepts(viaApi, apiRotated.secret)).toBe(true);
    expect(await accepts(viaApi, rotated.secret)).toBe(false);
  });

  it('an API rotation during a dashboard dual-sign window ends the window', async () => {
    ctx.fake.setFallback(OK);
    const created = await newEndpoint();
    await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'dashboard');
    const apiRotated = await rotateWebhookEndpointSecret(ctx.runtime, ctx.principal, created.id, 'api');
    const request = await deliverOne();
    expect(Object.keys(signatureParts(request))).toEqual(['t', 'v1']);
    expect(await accepts(request, apiRotated.secret)).toBe(true);
  });

  it('every POST carries the envelope and the trust headers', async () => {
    ctx.fake.setFallback(OK);
    await newEndpoint();
    const { event, message } = await oneDelivery();
    expect(await processDeliveryMessage(ctx.runtime, message)).toBe('succeeded');
    const request = ctx.fake.requests.at(-1)!;
    expect(request.url).toBe('https://receiver.example/hooks');
    expect(request.allowedIps ?? null).toBeNull();
    expect(request.headers['SVC-Event-Id']).toBe(event.id);
    expect(request.headers['SVC-Event-Name']).toBe('project.created');
    expect(request.headers['Content-Type']).toBe('application/json');
    const body = JSON.parse(request.body);
    expect(Object.keys(body).sort()).toEqual(['api_version', 'created_at', 'data', 'id', 'project_id', 'type']);
    expect(body).toMatchObject({
      id: event.id,
      type: 'project.created',
      api_version: '2026-05-01',
      project_id: event.project_id,
      created_at: event.created_at,
    });
    expect(body.data.project.id).toBe(event.project_id);
  });
});

// ---------------------------------------------------------------------------------------------------
// Payload exposure (interface "Data exposure", DESIGN D10)
// ---------------------------------------------------------------------------------------------------

describe('payload exposure', () => {
  it('redactPayload removes email and phone at any depth unless the owner holds project-user:view', () => {
    const data = {
      subscriber: { id: 's1', email: 'a@example.com', phone: '+15550100', display_name: 'A' },
      others: [{ email: 'b@example.com', nested: { phone: '+15550101', keep: 1 } }],
      note: 'email',
    };
    expect(redactPayload(data, ['project-user:view'])).toEqual(data);
    expect(redactPayload(data, ['project:view', 'project-user:view-any'])).toEqual({
      subscriber: { id: 's1', display_name: 'A' },
      others: [{ nested: { keep: 1 } }],
      note: 'email',
    });
    // The input is not modified.
    expect(data.subscriber.email).toBe('a@example.com');
  });

  it('a subscription.created payload carries e-mail and phone only when the owner holds project-user:view AND the subscriber consented (all four cases, D10)', async () => {
    ctx.fake.setFallback(OK);
    const { principal: withView } = await seedTeamMember([
      'webhook-endpoint:manage',
      'project-subscription:view',
      'project-user:view',
    ]);
    const { principal: withoutView } = await seedTeamMember([
      'webhook-endpoint:manage',
      'project-subscription:view',
      'project-user:view-any',
    ]);
    await newEndpoint(['subscription.created'], withView, { url: 'https://seeing.example/hooks' });
    await newEndpoint(['subscription.created'], withoutView, { url: 'https://blind.example/hooks' });

    // Real objects, through the domain: a project, a plan, a consenting and a non-consenting subscriber.
    const project = await createProject(ctx.runtime, ctx.principal, {
      name: 'Exposure club',
      platform_type: 'discord',
    });
    const plan = await createPlan(
      ctx.runtime,
      ctx.principal,
      project.id,
      CreatePlanRequest.parse({ name: 'Gold', amount: 500, currency: 'EUR', interval: 'month' }),
    );
    const consenting = await createSubscriber(
      ctx.runtime,
      ctx.principal,
      project.id,
      CreateSubscriberRequest.parse({
        display_name: 'Ada',
        email: 'ada@example.com',
        phone: '+15550123',
        consent: true,
      }),
    );
    const private_ = await createSubscriber(
      ctx.runtime,
      ctx.principal,
      project.id,
      CreateSubscriberRequest.parse({
        display_name: 'Bo',
        email: 'bo@example.com',
        phone: '+15550124',
        consent: false,
      }),
    );
    await relayOutbox(ctx.runtime, ctx.clock.nowMs()); // events before the subscriptions: not subscribed
    await runAll();
    ctx.fake.requests.length = 0;
    for (const subscriber of [consenting, private_]) {
      await createSubscription(
        ctx.runtime,
        ctx.principal,
        project.id,
        CreateSubscriptionRequest.parse({ subscriber_id: subscriber.id, plan_id: plan.id }),
      );
    }
    await relayOutbox(ctx.runtime, ctx.clock.nowMs());
    expect(await runAll()).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);

    const subscriberIn = (url: string, subscriberId: string) => {
      const bodies = ctx.fake.requests
        .filter((request) => request.url === url)
        .map((request) => JSON.parse(request.body) as { type: string; data: { subscriber: Record<string, unknown> } });
      const body = bodies.find(
        (candidate) => candidate.type === 'subscription.created' && candidate.data.subscriber.id === subscriberId,
      );
      expect(body, `${url} ${subscriberId}`).toBeDefined();
      return body!.data.subscriber;
    };
    // Owner with project-user:view, subscriber consented: contact details travel.
    expect(subscriberIn('https://seeing.example/hooks', consenting.id)).toMatchObject({
      email: 'ada@example.com',
      phone: '+15550123',
    });
    // Every other case: none.
    for (const [url, subscriberId] of [
      ['https://seeing.example/hooks', private_.id],
      ['https://blind.example/hooks', consenting.id],
      ['https://blind.example/hooks', private_.id],
    ] as const) {
      const subscriber = subscriberIn(url, subscriberId);
      expect(subscriber).not.toHaveProperty('email');
      expect(subscriber).not.toHaveProperty('phone');
    }
    const everything = JSON.stringify(ctx.fake.requests.map((request) => request.body));
    expect(everything).not.toContain('bo@example.com');
    expect(everything).not.toContain('+15550124');
  });
});
