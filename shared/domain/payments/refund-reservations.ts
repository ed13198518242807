import { randomUUID } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import { entity, keys } from '../../store/keys.js';
import { revisionOf } from '../../store/records.js';
import { ConditionFailedError, type Store } from '../../store/store.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { refundAmount } from './decisions.js';
import { loadPayment, toPayment, type StoredPayment } from './queries.js';
import type { Payment, RefundPaymentRequest } from './schema.js';

/**
 * Refund reservations (DESIGN D16; money moves only with the provider's agreement): a refund's amount is reserved (conditional on the revision) BEFORE the provider call,
 * settled in the refund's transaction, released on refusal, kept when unreachable (the same `Idempotency-Key` settles it later); it stops counting after {@link RESERVATION_LIFETIME_MS}.
 */

/** The payment item's map of reservations: reservation key → `{ amount (minor units), reserved_at_ms }`. */
const RESERVATIONS = 'refund_reservations';

/** How long a reservation counts (MILLISECONDS): Stripe keeps idempotency keys for 24 hours. */
const RESERVATION_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** One reservation as stored. */
interface Reservation {
  amount: number;
  reserved_at_ms: number;
}

/** The live reservations of a stored payment at `nowMs` (epoch ms), by key. */
function liveReservations(item: StoredPayment, nowMs: number): Record<string, Reservation> {
  const stored = (item[RESERVATIONS] ?? {}) as Record<string, Reservation>;
  return Object.fromEntries(
    Object.entries(stored).filter(
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

/** True when reservation `key` is still held on the stored payment at `nowMs` (epoch ms): not settled, released or expired. */
export function holdsReservation(item: StoredPayment, key: string, nowMs: number): boolean {
  return key in liveReservations(item, nowMs);
}

/** A refund reserved on its payment: the key (the provider idempotency key derives from it), the amount and the payment as read. */
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
      const revision = revisionOf(entity.payment, item);
      await runtime.store.update({
        Key: keys.payment(principal.teamId, paymentId),
        UpdateExpression: `SET #reservations = :reservations, revision = :next_revision`,
        ConditionExpression: 'attribute_exists(pk) AND revision = :revision',
        ExpressionAttributeNames: { '#reservations': RESERVATIONS },
        ExpressionAttributeValues: {
          ':reservations': { ...live, [key]: { amount, reserved_at_ms: nowMs } },
          ':revision': revision,
          ':next_revision': revision + 1,
        },
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

/** Releases reservation `key` of a payment (the provider refused the refund: nothing was refunded). A reservation already gone is fine. */
export async function releaseRefund(store: Store, teamId: string, paymentId: string, key: string): Promise<void> {
  try {
    await store.update({
      Key: keys.payment(teamId, paymentId),
      UpdateExpression: 'REMOVE #reservations.#key',
      ConditionExpression: 'attribute_exists(#reservations.#key)',
      ExpressionAttributeNames: { '#reservations': RESERVATIONS, '#key': key },
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
  }
}

/** The update clause and names that settle reservation `key` in the refund's own payment update. */
export function settleReservationClause(key: string): { clause: string; names: Record<string, string> } {
  return {
    clause: 'REMOVE #reservations.#reservation_key',
    names: { '#reservations': RESERVATIONS, '#reservation_key': key },
  };
}
