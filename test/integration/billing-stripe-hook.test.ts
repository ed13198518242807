/**
 * The operator's billing hook `POST /hooks/billing/stripe` (DESIGN D20, D22), against DynamoDB Local:
 * `invoice.payment_failed` and `invoice.paid` of the operator's Stripe account, carrying our team and
 * invoice ids in `metadata`, drive the operator CLI's operations (grace period, payment, its lifting), logged
 * as the operator's; idempotent on the event id; verified with `BILLING_STRIPE_WEBHOOK_SECRET` (unset: every
 * request 400) or, as on AWS, the Secrets Manager secret `BILLING_STRIPE_WEBHOOK_SECRET_ARN` names
 * (aws-sdk-client-mock: read once; a placeholder refuses every request; Secrets Manager failing → 500); other
 * events and invoices without our metadata acknowledged and ignored. No network.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { GetSecretValueCommand, InternalServiceError, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { changeTier } from '../../shared/domain/billing/changes.js';
import { getBillingOverview, listBillingInvoices } from '../../shared/domain/billing/reads.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { serveHookRequest } from '../../shared/hooks/dispatcher.js';
import { integrationSettingsOf } from '../../shared/integrations.js';
import { logger } from '../../shared/logger.js';
import { domainSnapshot } from '../support/guarantees.js';
import { TeamEventCursor } from '../support/events.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { invoice, newWebhookSecret, stripeEventBody, stripeId, stripeSignature } from '../support/stripe.js';
import { DAY_MS } from '../../shared/clock.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let billingSecret: string;
let invoiceId: string;
let eventCursor: TeamEventCursor;

function newEvents(): Promise<EventEnvelope[]> {
  return eventCursor.next();
}
const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const nowSeconds = () => Math.floor(clock.nowMs() / 1000);

/** Posts `body` to the billing hook with `signature` (or none). */
async function post(body: string, signature: string | undefined) {
  const path = '/hooks/billing/stripe';
  const result = await serveHookRequest(runtime, {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      ...(signature === undefined ? {} : { 'stripe-signature': signature }),
    },
    requestContext: {
      requestId: randomUUID(),
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'Stripe/1.0' },
    },
    body,
    isBase64Encoded: false,
  } as never);
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

/**
 * An operator invoice event of our invoice (`metadata` given, else our team and invoice ids), signed with the billing
 * secret.
 */
function operatorEvent(
  type: 'invoice.paid' | 'invoice.payment_failed' | (string & {}),
  metadata?: Record<string, string>,
) {
  const object = invoice({
    subscription: stripeId('sub'),
    paymentIntent: stripeId('pi'),
    amount: 1900,
    currency: 'usd',
    billingReason: 'subscription_cycle',
    metadata: metadata ?? { team_id: team.team.id, invoice_id: invoiceId },
  });
  const event = stripeEventBody(type, object, { created: nowSeconds() });
  return {
    ...event,
    send: (secret = billingSecret) => post(event.body, stripeSignature(event.body, secret, nowSeconds())),
  };
}

const secretsManager = mockClient(SecretsManagerClient);
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:billing-webhook-AbC123';

afterEach(() => {
  secretsManager.reset();
  vi.restoreAllMocks();
});

beforeEach(async () => {
  secretsManager.reset();
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  billingSecret = newWebhookSecret();
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: 'http://127.0.0.1:9',
    billingStripeWebhookSecret: billingSecret,
    retry: { retries: 0, minTimeoutMs: 1 },
  };
  team = await seedTeam(runtime.store, clock, undefined, 'free');
  await changeTier(runtime, team.team.id, 'pro');
  invoiceId = (await listBillingInvoices(runtime.store, team.team.id, { limit: 1 })).data[0].id;
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

describe('POST /hooks/billing/stripe', () => {
  it('a failed payment starts the grace period and a paid invoice ends it, as the CLI does; a re-sent event changes nothing', async () => {
    const failed = operatorEvent('invoice.payment_failed');
    expect(await failed.send()).toEqual({ status: 200, body: { received: true } });
    expect(types(await newEvents())).toEqual(['billing.payment_failed', 'billing.grace_period_started']);
    expect(await getBillingOverview(runtime, team.team.id)).toMatchObject({ status: 'grace_period' });

    const before = await domainSnapshot(runtime.store);
    expect(await failed.send()).toEqual({ status: 200, body: { received: true, duplicate: true } });
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(await newEvents()).toEqual([]);

    clock.advance(DAY_MS);
    expect(await operatorEvent('invoice.paid').send()).toEqual({ status: 200, body: { received: true } });
    expect(types(await newEvents())).toEqual(['billing.invoice_paid', 'billing.grace_period_ended']);
    expect(await getBillingOverview(runtime, team.team.id)).toMatchObject({ status: 'ok' });
    // Paid already: a second invoice.paid (another event id) is acknowledged and changes nothing.
    const again = await operatorEvent('invoice.paid').send();
    expect(again.status).toBe(200);
    expect(again.body.ignored).toContain('CONFLICT');
    expect(await newEvents()).toEqual([]);
  });

  it('runs each payment result through the pipeline as the operator: one activity entry per event, refusals included', async () => {
    const failed = operatorEvent('invoice.payment_failed');
    await failed.send();
    await failed.send();
    await operatorEvent('invoice.paid').send();
    await operatorEvent('invoice.paid').send();
    await operatorEvent('invoice.paid', { team_id: randomUUID(), invoice_id: invoiceId }).send();

    const { data } = await listActivity(runtime.store, team.team.id, { limit: 10 });
    expect(
      data.map(({ operation, outcome, surface, token_id }) => ({ operation, outcome, surface, token_id })),
    ).toEqual([
      { operation: 'markBillingInvoicePaid', outcome: 'CONFLICT', surface: 'operator', token_id: null },
      { operation: 'markBillingInvoicePaid', outcome: 'ok', surface: 'operator', token_id: null },
      { operation: 'markBillingInvoicePaymentFailed', outcome: 'ok', surface: 'operator', token_id: null },
    ]);
  });

  it('acknowledges other events and invoices without our metadata, changing nothing but the receipt', async () => {
    const before = await domainSnapshot(runtime.store);
    expect(await operatorEvent('customer.created').send()).toEqual({
      status: 200,
      body: { received: true, ignored: 'customer.created is not mapped' },
    });
    expect((await operatorEvent('invoice.paid', {}).send()).body.ignored).toBe(
      'the invoice has no metadata.team_id and metadata.invoice_id',
    );
    expect(
      (await operatorEvent('invoice.paid', { team_id: team.team.id, invoice_id: randomUUID() }).send()).body.ignored,
    ).toContain('NOT_FOUND');
    const added = (await domainSnapshot(runtime.store))
      .filter((line) => !before.includes(line))
      .map((line) => JSON.parse(line).entity);
    expect(added).toEqual(['hook_receipt']);
    expect(await newEvents()).toEqual([]);
  });

  it('refuses a wrong, missing or stale signature, and every request while BILLING_STRIPE_WEBHOOK_SECRET is unset', async () => {
    const event = operatorEvent('invoice.paid');
    const refused = {
      status: 400,
      body: { error: 'The Stripe-Signature header is missing or does not verify for this endpoint.' },
    };
    expect(await event.send(newWebhookSecret())).toEqual(refused);
    expect(await post(event.body, undefined)).toEqual(refused);
    expect(await post(event.body, stripeSignature(event.body, billingSecret, nowSeconds() - 301))).toEqual(refused);
    runtime.integrations = { ...runtime.integrations!, billingStripeWebhookSecret: undefined };
    expect(await event.send()).toEqual(refused);
    expect(await newEvents()).toEqual([]);
  });

  it('on AWS verifies with the Secrets Manager secret named by BILLING_STRIPE_WEBHOOK_SECRET_ARN, read once; a placeholder refuses every request, a failing read answers 500', async () => {
    const refused = {
      status: 400,
      body: { error: 'The Stripe-Signature header is missing or does not verify for this endpoint.' },
    };
    const onAws = () => ({
      ...runtime.integrations!,
      billingStripeWebhookSecret: integrationSettingsOf({ BILLING_STRIPE_WEBHOOK_SECRET_ARN: SECRET_ARN })
        .billingStripeWebhookSecret,
    });
    secretsManager.on(GetSecretValueCommand, { SecretId: SECRET_ARN }).resolves({ SecretString: billingSecret });
    runtime.integrations = onAws();
    expect(await operatorEvent('invoice.payment_failed').send()).toEqual({ status: 200, body: { received: true } });
    expect(await operatorEvent('customer.created').send()).toMatchObject({ status: 200 });
    expect(types(await newEvents())).toEqual(['billing.payment_failed', 'billing.grace_period_started']);
    expect(secretsManager.commandCalls(GetSecretValueCommand)).toHaveLength(1);

    // The secret as the stack creates it: a generated placeholder, not whsec_... — refused, logged once.
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    secretsManager.reset();
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: 'GeneratedPlaceholder0123456789ab' });
    runtime.integrations = onAws();
    const paid = operatorEvent('invoice.paid');
    expect(await paid.send()).toEqual(refused);
    expect(await paid.send('GeneratedPlaceholder0123456789ab')).toEqual(refused);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(JSON.stringify(warn.mock.calls)).not.toContain('GeneratedPlaceholder');

    // Secrets Manager unreachable: not stored, so 500 (Stripe sends it again); the next request reads again.
    secretsManager.reset();
    secretsManager
      .on(GetSecretValueCommand)
      .rejectsOnce(new InternalServiceError({ message: 'unavailable', $metadata: {} }))
      .resolves({ SecretString: billingSecret });
    runtime.integrations = onAws();
    expect((await paid.send()).status).toBe(500);
    expect(await paid.send()).toEqual({ status: 200, body: { received: true } });
    expect(types(await newEvents())).toEqual(['billing.invoice_paid', 'billing.grace_period_ended']);
  });
});
