import type { Principal } from '../../auth/principal.js';
import { canAccessSubscriberData, listedSubscriber, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { listPaymentsOfProject, readPayment } from '../../store/payments/reads.js';
import type { Item } from '../../store/requests.js';
import { parseStoredPayment } from './record.js';
import type { ListPaymentsQuery, Payment } from './schema.js';

/**
 * Reads of payments (DESIGN D14, D15, D16) within the principal's scope, over the payments' store adapter
 * (`shared/store/payments.ts`). Every status change is ONE transaction with its `payment.*` event (first) and the
 * D15 transition it drives (through `createSubscription` / `changeSubscriptionWith`). Items carry `revision`.
 */

/**
 * The stored payment item (read through `toPayment` and `revisionOf`, never cast): the public fields, `revision` and
 * `provider_refund_id` (the provider's id of the LAST refund we made, Stripe `re_...`), written with its
 * `payment.refunded`, so the inbound `charge.refunded` for it changes nothing.
 */
export type StoredPayment = Item;

const notFound = (paymentId: string) => new ProblemError('NOT_FOUND', `No payment ${paymentId}.`);

/** The public payment of a stored item (throws StoredRecordError naming its key when it does not match). */
export function toPayment(item: Item): Payment {
  const stored = parseStoredPayment(item);
  return {
    id: stored.id,
    project_id: stored.project_id,
    subscriber_id: stored.subscriber_id,
    subscription_id: stored.subscription_id,
    amount: stored.amount,
    amount_refunded: stored.amount_refunded ?? 0,
    currency: stored.currency,
    status: stored.status,
    provider: stored.provider,
    provider_payment_id: stored.provider_payment_id ?? null,
    billing_reason: stored.billing_reason,
    mismatch: stored.mismatch ?? null,
    discount: stored.discount ?? null,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
  };
}

/**
 * The stored payment of the principal's team (strongly consistent). Errors: NOT_FOUND (absent, foreign, out of scope,
 * another subscriber's in the portal).
 */
export async function loadPayment(store: Store, principal: Principal, paymentId: string): Promise<StoredPayment> {
  const item = await readPayment(store, principal.teamId, paymentId);
  if (!item) throw notFound(paymentId);
  const payment = toPayment(item);
  if (!canAccessSubscriberData(principal, payment.project_id, payment.subscriber_id)) throw notFound(paymentId);
  return item;
}

/**
 * Reads one payment by id within the principal's team (`GET /v1/payments/{id}`): one GetItem.
 * Errors: NOT_FOUND when absent, of another team, or of a project outside the token's project scope.
 */
export async function getPayment(store: Store, principal: Principal, paymentId: string): Promise<Payment> {
  return toPayment(await loadPayment(store, principal, paymentId));
}

/** A timestamp of a query as the keys hold it (`toISOString`, milliseconds and `Z`). */
const keyTime = (timestamp: string) => isoTime(Date.parse(timestamp));

/**
 * Lists a project's payments, newest first (DESIGN D12), optionally by subscriber (index items + one BatchGet),
 * `[created_after, created_before)`, status or provider (page filters: a page may be short with `next_cursor` set); a
 * portal principal sees only its own (D27). Errors: NOT_FOUND; VALIDATION_FAILED (date range, a cursor of another
 * list).
 */
export async function listPayments(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Omit<ListPaymentsQuery, 'limit'> & { limit: number },
): Promise<Page<Payment>> {
  requireProjectAccess(principal, projectId);
  const teamId = principal.teamId;
  const from = query.created_after ? keyTime(query.created_after) : null;
  const to = query.created_before ? keyTime(query.created_before) : null;
  if (from !== null && to !== null && from >= to) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      'The date range is empty: created_before must be after created_after.',
      {
        errors: [{ path: 'created_before', message: 'must be after created_after' }],
      },
    );
  }
  const subscriberId = listedSubscriber(principal, query.subscriber_id) ?? null;
  const { limit, cursor, status, provider } = query;
  const list = { subscriberId, from, to, limit, cursor, status, provider };
  const page = await listPaymentsOfProject(store, teamId, projectId, list, toPayment);
  if (!page) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return page;
}
