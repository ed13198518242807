import type Stripe from 'stripe';
import { isoTime } from '../../clock.js';
import { scheduleDeadline } from '../../deadlines/deadline.js';
import { giftStore } from '../../store/gifts.js';
import { ConditionFailedError } from '../../store/store.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { toGift } from './record.js';

/** What a completed gift checkout did: applied, or ignored with the reason (the hook logs it). */
export type GiftPaymentOutcome = { applied: true } | { ignored: string };

/**
 * `checkout.session.completed` of a gift (`metadata.gift_id`, DESIGN D33): a paid session marks the gift `paid` with
 * the amount Stripe charged and schedules its delivery (`gift.delivery` at `deliver_at`, or now when that passed), in
 * one transaction conditional on `pending_payment`, so a redelivered event changes nothing. No subscriber, no
 * subscription and no payment record: payments belong to subscriptions, so the money stays on the gift.
 */
export async function giftCheckoutCompleted(
  runtime: UnitOfWorkRuntime,
  teamId: string,
  projectId: string,
  giftId: string,
  session: Stripe.Checkout.Session,
): Promise<GiftPaymentOutcome> {
  const gift = await giftStore.read(runtime.store, teamId, projectId, giftId);
  if (!gift) return { ignored: `no gift ${giftId} in this project` };
  if (gift.status !== 'pending_payment') return { ignored: `gift ${giftId} is ${gift.status} already` };
  if (session.mode !== 'payment' || session.payment_status !== 'paid')
    return { ignored: `the gift\u2019s checkout is ${session.payment_status}, not paid` };
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  try {
    await unitOfWork(runtime, teamId, (tx) => {
      giftStore.transition(tx, teamId, gift, 'pending_payment', {
        status: 'paid',
        paid_at: now,
        updated_at: now,
        amount: session.amount_total ?? gift.amount,
        currency: (session.currency ?? gift.currency).toUpperCase(),
        provider_checkout_session_id: session.id,
      });
      scheduleDeadline(tx, {
        teamId,
        kind: 'gift.delivery',
        subjectId: gift.id,
        projectId,
        dueAt: isoTime(Math.max(nowMs, Date.parse(toGift(gift).deliver_at))),
      });
    });
  } catch (error) {
    if (error instanceof ConditionFailedError) return { ignored: `gift ${giftId} was paid meanwhile` };
    throw error;
  }
  return { applied: true };
}
