/**
 * A project's Stripe events run through the one pipeline (DESIGN D22, D35) as the internal operation
 * `applyStripeEvent`: one activity entry per delivery (surface `hook`, no token, the event id as `request_id`),
 * refusals included; a re-sent event writes none; the event's receipt, effect and entry commit in one transaction; a
 * locked team's events still apply (the money moved at Stripe already, D20). Against DynamoDB Local, through the hooks
 * dispatcher the local server uses. No network.
 */
import { describe, expect, it } from 'vitest';
import { changeTier } from '../../shared/domain/billing/changes.js';
import { keys } from '../../shared/store/keys.js';
import { lockTeam } from '../support/billing.js';
import { expectRestProblem } from '../support/guarantees.js';
import { countingStore } from '../support/store.js';
import { checkoutSession, stripeId, stripeSignature } from '../support/stripe.js';
import {
  activityOf,
  call,
  gold,
  newEvents,
  nowSeconds,
  projectId,
  runtime,
  serveStripeHook,
  stripeEvent,
  team,
  types,
  useStripeHooksFixture,
  webhookSecret,
} from '../support/fixtures/stripe-hooks.js';

useStripeHooksFixture();

/** The team's activity entries of surface `hook`, oldest first, in the fields the test reads. */
const hookEntries = async () =>
  (await activityOf('hook')).map(({ token_id, member_id, operation, outcome, status, request_id }) => ({
    token_id,
    member_id,
    operation,
    outcome,
    status,
    request_id,
  }));

const entryOf = (eventId: string, outcome = 'ok', status = 200) => ({
  token_id: null,
  member_id: null,
  operation: 'applyStripeEvent',
  outcome,
  status,
  request_id: `stripe:${eventId}`,
});

describe('Stripe events through the pipeline', () => {
  it('writes one activity entry per delivery, refusals included, and none for a re-sent event', async () => {
    const session = checkoutSession({ customer: stripeId('cus'), planId: gold.id, mode: 'payment' });
    // Settled before its checkout was applied: refused (409), and the refusal is in the log.
    const early = stripeEvent('checkout.session.async_payment_succeeded', { ...session, payment_status: 'paid' });
    expect((await early.send()).status).toBe(409);
    const completed = stripeEvent('checkout.session.completed', session);
    expect(await completed.send()).toEqual({ status: 200, body: { received: true } });
    expect(await completed.send()).toEqual({ status: 200, body: { received: true, duplicate: true } });
    const unmapped = stripeEvent('customer.created', { id: stripeId('cus'), object: 'customer' });
    expect((await unmapped.send()).body).toEqual({ received: true, ignored: 'customer.created is not mapped' });

    expect(await hookEntries()).toEqual([
      entryOf(early.id, 'CONFLICT', 409),
      entryOf(completed.id),
      entryOf(unmapped.id),
    ]);
  });

  it('commits the event’s receipt, its effect and its activity entry in one transaction', async () => {
    const counting = countingStore(runtime.store);
    const event = stripeEvent(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), planId: gold.id }),
    );
    const answer = await serveStripeHook(
      { ...runtime, store: counting.store },
      projectId,
      event.body,
      stripeSignature(event.body, webhookSecret, nowSeconds()),
    );
    expect(answer).toEqual({ status: 200, body: { received: true } });

    const receipt = keys.hookReceipt(team.team.id, 'stripe', projectId, event.id);
    const writes = counting
      .sent()
      .filter((request) => request.command !== 'GetCommand' && !/Get|Query/.test(request.command));
    const written = (request: (typeof writes)[number]) =>
      ((request.input.TransactItems ?? []) as { Put?: { Item: Record<string, unknown> } }[]).map(
        (item) => item.Put?.Item,
      );
    const withReceipt = writes.filter((request) =>
      written(request).some((item) => item?.pk === receipt.pk && item.sk === receipt.sk),
    );
    expect(withReceipt).toHaveLength(1);
    const entities = written(withReceipt[0]).map((item) => item?.entity);
    expect(entities).toEqual(expect.arrayContaining(['hook_receipt', 'activity', 'subscription', 'subscriber']));
    expect(types(await newEvents())).toContain('subscription.created');
  });

  it('applies a locked team’s events: the lockdown holds back creator writes, never what Stripe reports', async () => {
    await changeTier(runtime, team.team.id, 'free'); // locked from a paid tier's unpaid first invoice
    await lockTeam(runtime, team.team.id);
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/plans`, {
        name: 'Silver',
        amount: 500,
        currency: 'EUR',
        interval: 'month',
      }),
      'BILLING_LOCKED',
    );
    const event = stripeEvent(
      'checkout.session.completed',
      checkoutSession({ customer: stripeId('cus'), planId: gold.id }),
    );
    expect(await event.send()).toEqual({ status: 200, body: { received: true } });
    expect(types(await newEvents())).toContain('subscription.created');
    expect(await hookEntries()).toEqual([entryOf(event.id)]);
  });
});
