import { createHash, randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import type { PaymentProviderAdapters } from '../../providers/payment-provider.js';
import type { RetryPolicy } from '../../retry.js';
import { giftStore } from '../../store/gifts.js';
import { outsideRequestScope } from '../../store/request-scope.js';
import { ConditionFailedError } from '../../store/store.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { createSession, redirectUrls, sellablePlan } from '../checkout-sessions/checkout.js';
import type { CreateGiftCheckoutRequest, Gift, GiftCheckoutSession } from './schema.js';
import { deliveryTime } from './dates.js';
import { toGift } from './record.js';

/**
 * Buying a gift (DESIGN D33): the gift is stored `pending_payment` first, then a Stripe Checkout Session in mode
 * `payment` sells one term of the plan (`price_data` on its product), and the gift records the session. Stripe's
 * `checkout.session.completed` marks it paid (`paid.ts`); nothing is granted by the redirect.
 */

/** A UUID (version 4 layout) derived from `material`: the same request key gives the same gift. */
function derivedUuid(material: string): string {
  const hex = createHash('sha256').update(material).digest('hex').slice(0, 32).split('');
  hex[12] = '4';
  hex[16] = ((parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  const text = hex.join('');
  return `${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`;
}

/**
 * Starts the purchase of a gift of plan `planId` (`idempotencyKey`: the same key gives the same gift and the same
 * Stripe session). Errors: NOT_FOUND; CONFLICT (plan not sellable through Stripe, or without a product);
 * VALIDATION_FAILED (date, no redirect URL, Stripe's refusal); PROVIDER_UNAVAILABLE.
 */
export async function startGiftCheckout(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  planId: string,
  input: CreateGiftCheckoutRequest,
  options: { adapters: PaymentProviderAdapters; idempotencyKey?: string | null; retry?: RetryPolicy },
): Promise<GiftCheckoutSession> {
  const { plan, project, adapter } = await sellablePlan(runtime.store, principal, planId, options.adapters);
  if (!plan.provider_product_id)
    throw new ProblemError(
      'CONFLICT',
      `Plan ${plan.id} has no Stripe product; sync it with POST /v1/plans/${plan.id}/sync.`,
    );
  const nowMs = runtime.clock.nowMs();
  const deliverAtMs = deliveryTime(input.deliver_on, project.time_zone, nowMs);
  const giftId = options.idempotencyKey
    ? derivedUuid(JSON.stringify(['gift', principal.teamId, options.idempotencyKey]))
    : randomUUID();
  const base = integrationsOf(runtime).publicBaseUrl;
  const urls = redirectUrls(runtime, project.id, {
    successUrl:
      input.success_url ??
      (base ? `${base}/join/${project.id}/gifts/${giftId}?session_id={CHECKOUT_SESSION_ID}` : null),
    cancelUrl: input.cancel_url,
  });
  const now = isoTime(nowMs);
  const gift: Gift = {
    id: giftId,
    project_id: project.id,
    plan_id: plan.id,
    buyer_email: input.buyer_email,
    recipient_email: input.recipient_email,
    message: input.message?.trim() || null,
    deliver_at: isoTime(deliverAtMs),
    amount: plan.amount,
    currency: plan.currency,
    status: 'pending_payment',
    provider_checkout_session_id: null,
    access_code_id: null,
    created_at: now,
    paid_at: null,
    delivered_at: null,
    updated_at: now,
  };
  // Stored before Stripe is asked (a payment always finds its gift); a retry of the same request finds it stored.
  const stored = await outsideRequestScope(async () => {
    try {
      await unitOfWork(runtime, principal.teamId, (tx) => giftStore.create(tx, principal.teamId, gift));
      return gift;
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
      const existing = await giftStore.read(runtime.store, principal.teamId, project.id, giftId);
      if (!existing) throw error;
      return toGift(existing);
    }
  });
  const session = await createSession(runtime, options.retry, plan.id, () =>
    adapter.createGiftCheckoutSession({
      team_id: principal.teamId,
      project_id: project.id,
      plan_id: plan.id,
      gift_id: stored.id,
      provider_product_id: plan.provider_product_id!,
      amount: stored.amount,
      currency: stored.currency,
      description: `Gift: ${plan.name}`,
      buyer_email: stored.buyer_email,
      success_url: urls.success,
      cancel_url: urls.cancel,
      idempotency_key: `gift-${createHash('sha256')
        .update(JSON.stringify([principal.teamId, stored.id]))
        .digest('hex')
        .slice(0, 40)}`,
    }),
  );
  const updated: Gift = {
    ...stored,
    provider_checkout_session_id: session.id,
    updated_at: isoTime(runtime.clock.nowMs()),
  };
  await unitOfWork(runtime, principal.teamId, (tx) =>
    giftStore.transition(tx, principal.teamId, stored, 'pending_payment', {
      provider_checkout_session_id: session.id,
      updated_at: updated.updated_at,
    }),
  );
  return { gift: updated, url: session.url, expires_at: session.expires_at };
}
