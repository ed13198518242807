/**
 * Gifts (DESIGN D33) through the join page, the loopback Stripe fake and DynamoDB Local: the buyer posts the "Give as a
 * gift" form, which opens a Checkout Session in mode payment priced inline (the plan's amount on its product) with the
 * gift in its metadata; paying it (the fake delivers checkout.session.completed to the hook) marks the gift paid and
 * makes no subscription; the delivery deadline, once the clock passes deliver_at, e-mails the recipient one code that
 * redeems into the plan, and a second run sends nothing; without e-mail the buyer's receipt page shows the code.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { deadlineOf } from '../../shared/deadlines/deadline.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { applyGiftDelivery } from '../../shared/domain/gifts/delivery.js';
import { listSubscriptions } from '../../shared/domain/subscriptions/queries.js';
import { smtpMailSender } from '../../shared/mail/nodemailer.js';
import { keys } from '../../shared/store/keys.js';
import { caller } from '../support/calls.js';
import {
  clock,
  openJoinPage,
  projectId,
  runtime,
  serve,
  team,
  usePublicPagesFixture,
} from '../support/fixtures/public-pages.js';
import { startHookServer } from '../support/hook-server.js';
import { startCapturingSmtpServer, type CapturingSmtpServer } from '../support/mail.js';
import { startFakeStripeApi, type FakeStripeApi } from '../support/stripe-api.js';
import { connectStripe } from '../support/stripe.js';
import { DAY_MS } from '../../shared/clock.js';

usePublicPagesFixture();

let stripe: FakeStripeApi;
let smtp: CapturingSmtpServer;
let hooks: Awaited<ReturnType<typeof startHookServer>>;

beforeAll(async () => {
  stripe = await startFakeStripeApi();
  smtp = await startCapturingSmtpServer();
  hooks = await startHookServer(() => runtime);
});
afterAll(async () => {
  await Promise.all([stripe.stop(), smtp.close(), hooks.close()]);
});

const { ok } = caller(() => ({ runtime, token: team.token }));

let planId: string;

beforeEach(async () => {
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    publicBaseUrl: 'https://members.example',
    retry: { retries: 0, minTimeoutMs: 1 },
  };
  const { webhookSecret } = await connectStripe(stripe, (path, body) => ok('PUT', path, body), projectId);
  stripe.deliverEventsTo(`${hooks.url}/hooks/stripe/${projectId}`, webhookSecret);
  const plan = await ok(
    'POST',
    `/v1/projects/${projectId}/plans`,
    { name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month' },
    201,
  );
  expect(plan.sync_status).toBe('synced');
  planId = plan.id;
});

/** Posts the join page's gift form of the plan; returns the fake's Checkout Session and the gift's id. */
async function buyGift(recipient: string, deliverOn?: string) {
  const { page, cookies, csrf } = await openJoinPage();
  expect(page.body).toContain('Give as a gift');
  expect(page.body).toContain(`action="/join/${projectId}/plans/${planId}/gift"`);
  const posted = await serve('POST', `/join/${projectId}/plans/${planId}/gift`, {
    cookies,
    form: {
      csrf_token: csrf,
      idempotency_key: randomUUID(),
      buyer_email: 'buyer@example.com',
      recipient_email: recipient,
      ...(deliverOn ? { deliver_on: deliverOn } : {}),
      message: 'Happy birthday!',
    },
  });
  expect(posted.statusCode, posted.body).toBe(303);
  const session = [...stripe.checkoutSessions.values()].find((candidate) => posted.headers.Location === candidate.url)!;
  return { session, giftId: session.metadata.gift_id as string };
}

/** Pays the session on the fake's hosted page; returns where Stripe sends the buyer (the receipt page). */
async function pay(session: Record<string, any>): Promise<string> {
  const answer = await fetch(`${session.url}/pay`, {
    method: 'POST',
    body: new URLSearchParams({ email: 'buyer@example.com' }),
    redirect: 'manual',
  });
  expect(answer.status).toBe(303);
  return answer.headers.get('location')!;
}

const giftOf = (id: string) => ok('GET', `/v1/gifts/${id}`);
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('gifts', () => {
  it('sells one term as a one-off payment, is paid without a subscription, and e-mails one code on the day', async () => {
    runtime.mail = smtpMailSender(smtp.url, 'members@example.com');
    const recipient = `friend-${randomUUID()}@example.com`;
    const { session, giftId } = await buyGift(recipient, day(clock.nowMs() + 3 * DAY_MS));
    const plan = await ok('GET', `/v1/plans/${planId}`);
    expect(session).toMatchObject({
      mode: 'payment',
      line_items: [
        { quantity: '1', price_data: { product: plan.provider_product_id, unit_amount: '900', currency: 'eur' } },
      ],
      metadata: { project_id: projectId, plan_id: planId, gift_id: giftId },
      customer_email: 'buyer@example.com',
      success_url: `https://members.example/join/${projectId}/gifts/${giftId}?session_id={CHECKOUT_SESSION_ID}`,
    });
    expect(await giftOf(giftId)).toMatchObject({ status: 'pending_payment', provider_checkout_session_id: session.id });

    const receipt = (await pay(session)).replace('https://members.example', '');
    const paid = await giftOf(giftId);
    expect(paid).toMatchObject({ status: 'paid', amount: 900, currency: 'EUR', recipient_email: recipient });
    expect(paid).not.toHaveProperty('code');
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data).toHaveLength(0);
    expect((await serve('GET', receipt)).body).toContain(`will get the gift by e-mail on`);
    expect((await serve('GET', receipt.replace(session.id, 'cs_test_forged'))).statusCode).toBe(404);

    // Redelivered: nothing changes.
    await pay(session);
    expect(await giftOf(giftId)).toEqual(paid);

    await applyDueDeadlines(runtime, clock.nowMs());
    expect((await giftOf(giftId)).status).toBe('paid');
    clock.advance(4 * DAY_MS);
    const item = await runtime.store.get(keys.deadline(team.team.id, 'gift.delivery', giftId));
    const deadline = deadlineOf(item!);
    await Promise.all([applyGiftDelivery(runtime, deadline), applyGiftDelivery(runtime, deadline)]);
    await applyDueDeadlines(runtime, clock.nowMs());
    const mail = await smtp.waitForMail((candidate) => candidate.envelopeTo.includes(recipient));
    expect(mail.subject).toContain('Monthly reader');
    expect(mail.text).toContain('buyer@example.com');
    expect(mail.text).toContain('Happy birthday!');
    const code = /one-use code: (\S+)/.exec(mail.text)![1];
    expect(mail.text).toContain(`/join/${projectId}?code=${code}`);
    expect(smtp.messages.filter((candidate) => candidate.envelopeTo.includes(recipient))).toHaveLength(1);
    const delivered = await giftOf(giftId);
    expect(delivered).toMatchObject({ status: 'delivered', access_code_id: expect.any(String) });
    expect(JSON.stringify(delivered)).not.toContain(code);
    expect((await serve('GET', receipt)).body).not.toContain(code);

    // The code redeems into the plan, once.
    const { cookies, csrf } = await openJoinPage();
    const redeem = (email: string) =>
      serve('POST', `/join/${projectId}/code`, {
        cookies,
        form: { csrf_token: csrf, idempotency_key: randomUUID(), code, email },
      });
    expect((await redeem(recipient)).statusCode).toBe(303);
    const subscriptions = await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 });
    expect(subscriptions.data).toHaveLength(1);
    expect(subscriptions.data[0]).toMatchObject({ plan_id: planId, status: 'active' });
    expect((await redeem('someone-else@example.com')).statusCode).not.toBe(303);
  });

  it('shows the code on the buyer’s receipt when e-mail is not configured', async () => {
    runtime.mail = undefined;
    const { session, giftId } = await buyGift('friend@example.com');
    const receipt = (await pay(session)).replace('https://members.example', '');
    await applyDueDeadlines(runtime, clock.nowMs());
    expect(await giftOf(giftId)).toMatchObject({ status: 'delivered' });
    const body = (await serve('GET', receipt)).body ?? '';
    expect(body).toContain('Pass this one-use code on to friend@example.com');
    expect(body).toMatch(/<code>[A-Z0-9-]{6,}<\/code>/);
    expect(smtp.messages.filter((mail) => mail.envelopeTo.includes('friend@example.com'))).toHaveLength(0);
    expect((await ok('GET', `/v1/projects/${projectId}/gifts`)).data.map((gift: { id: string }) => gift.id)).toEqual([
      giftId,
    ]);
  });

  it('refuses a delivery date in the past', async () => {
    const { cookies, csrf } = await openJoinPage();
    const posted = await serve('POST', `/join/${projectId}/plans/${planId}/gift`, {
      cookies,
      form: {
        csrf_token: csrf,
        idempotency_key: randomUUID(),
        buyer_email: 'buyer@example.com',
        recipient_email: 'friend@example.com',
        deliver_on: day(clock.nowMs() - 2 * DAY_MS),
      },
    });
    expect(posted.statusCode).toBe(422);
    expect(posted.body).toContain('deliver_on');
  });
});
