import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import { reservationsOf, writeRefundReservations, type StoredReservation } from '../../store/payments/writes.js';
import type { Store } from '../../store/store.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { refundAmount } from './decisions.js';
import { loadPayment, toPayment, type StoredPayment } from './queries.js';
import type { Payment, RefundPaymentRequest } from './schema.js';
import { DAY_MS } from '../../clock.js';

/**
 * Refund reservations (DESIGN D16; money moves only with the provider's agreement): a refund's amount is reserved
 * (conditional on the revision) BEFORE the provider call, settled in the refund's transaction, released on refusal,
 * kept when unreachable (the same `Idempotency-Key` settles it later); it stops counting after {@link
 * RESERVATION_LIFETIME_MS}.
 */

/** How long a reservation counts (MILLISECONDS): Stripe keeps idempotency keys for 24 hours. */
const RESERVATION_LIFETIME_MS = DAY_MS;

/** The live reservations of a stored payment at `nowMs` (epoch ms), by key. */
function liveReservations(item: StoredPayment, nowMs: number): Record<string, StoredReservation> {
  return Object.fromEntries(
    Object.entries(reservationsOf(item)).filter(
      ([, reservation]) => nowMs - Number(reservation.reserved_at_ms) < RESERVATION_LIFETIME_MS,
    ),
  );
}

/** Minor units of a stored payment reserved by refunds in flight at `nowMs` (epoch ms), other than `exceptKey`'s. */
export function reservedAmount(item: StoredPayment, nowMs: number, exceptKey: string | null = null): number {
  return Object.entries(liveReservations(item, nowMs)).reduce(
    (sum, [key, reservation]) => (key === exceptKey ? sum : sum + Number(reservation.amount)),
    0,
  );
}

/**
 * True when reservation `key` is still held on the stored payment at `nowMs` (epoch ms): not settled, released or
 * expired.
 */
export function holdsReservation(item: StoredPayment, key: string, nowMs: number): boolean {
  return key in liveReservations(item, nowMs);
}

/**
 * A refund reserved on its payment: the key (the provider idempotency key derives from it), the amount and the payment
 * as read.
 */
export interface ReservedRefund {
  key: string;
  amount: number;
  payment: Payment;
}

/**
 * Reserves a refund of `input` on payment `paymentId` (see above). `idempotencyKey` is the caller's
 * (a retry of the same request finds and reuses its reservation); without one every call is a new refund.
 * Errors: NOT_FOUND; CONFLICT (not succeeded; refunds in flight leave too little — naming them);
 * VALIDATION_FAILED (more than what is left).
 */
export async function reserveRefund(
  runtime: { store: Store; clock: { nowMs(): number } },
  principal: Principal,
  paymentId: string,
  input: RefundPaymentRequest,
  idempotencyKey: string | null,
): Promise<ReservedRefund> {
  const key = idempotencyKey ?? randomUUID();
  return retryOnLostRace(
    async () => {
      const item = await loadPayment(runtime.store, principal, paymentId);
      const nowMs = runtime.clock.nowMs();
      const payment = toPayment(item);
      const live = liveReservations(item, nowMs);
      if (live[key]) return { key, amount: Number(live[key].amount), payment };
      const inFlight = reservedAmount(item, nowMs);
      const left = payment.amount - payment.amount_refunded - inFlight;
      if (inFlight > 0 && (left <= 0 || (input.amount ?? left) > left)) {
        throw new ProblemError(
          'CONFLICT',
          `Payment ${paymentId} has ${inFlight} ${payment.currency} (minor units) being refunded by other requests; ${Math.max(0, left)} is left to refund. Read it again once they finish.`,
        );
      }
      const amount = refundAmount(
        { ...payment, amount_refunded: payment.amount_refunded + inFlight },
        paymentId,
        input,
      );
      await writeRefundReservations(runtime.store, principal.teamId, paymentId, item, {
        ...live,
        [key]: { amount, reserved_at_ms: nowMs },
      });
      return { key, amount, payment };
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Payment ${paymentId} kept changing while this refund was reserved; read it again and retry.`,
        ),
    },
  );
}
