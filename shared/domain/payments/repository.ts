import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireAbility, requireProjectAccess } from '../../auth/authorize.js';
import type { PaymentProvider } from '../../catalogues/payment-providers.js';
import type { SubscriptionStatus } from '../../catalogues/subscription-statuses.js';
import { isoTime } from '../../clock.js';
import { ProblemError, type FieldError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import type { IntegrationRuntime } from '../../integrations.js';
import { logger } from '../../logger.js';
import { manualPaymentProvider } from '../../providers/manual.js';
import type { PaymentProviderAdapters, RefundRequest, RefundResult } from '../../providers/payment-provider.js';
import { retryPolicyOf, retryWhile, type RetryPolicy } from '../../retry.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import { decodeCursor, encodeCursor, type Item, type Page, type Store } from '../../store/store.js';
import type { Transaction, UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { getPlan } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { loadProject, toProject } from '../projects/repository.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import type { Project } from '../projects/schema.js';
import { createSubscription } from '../subscriptions/creation.js';
import { changeSubscriptionWith } from '../subscriptions/transitions.js';
import type { SubscriptionChange } from '../subscriptions/writes.js';
import type { Subscription } from '../subscriptions/schema.js';
import { ruleFor, type SubscriptionTrigger } from '../subscriptions/state-machine.js';
import type { BillingReason, ListPaymentsQuery, Payment, PaymentRefund, PaymentStatus, RecordPaymentRequest, RefundPaymentRequest, SettlePaymentRequest } from './schema.js';

/**
 * Persistence and use cases of payments (DESIGN D14, D15, D16): for the `manual` provider the creator
 * records a payment (pending, succeeded or failed) for a subscription and settles a pending one; any
 * provider's succeeded payment is refunded in full or in part (through the provider's adapter: Stripe's
 * Refunds API); a provider that reports its payments itself (`stripe`, through its inbound events:
 * `stripe-events.ts`) records them with {@link recordProviderPayment} and {@link recordProviderRefund},
 * found again by the provider's payment id (`keys.providerPayment`).
 *
 * A payment is one item in a partition of its own (`keys.payment`), read by id with one GetItem; a
 * project's payments are listed through the sparse GSI (`TEAM#<team>#PROJECT#<project>#PAYMENTS`, sort
 * key = creation time then id, so a date range is a key condition), a subscriber's through immutable
 * index items in the subscriber's per-project partition, written in the payment's transaction.
 *
 * Every status change of a payment is ONE transaction with its `payment.*` event and the D15 transition
 * its outcome drives (through the subscriptions module: `createSubscription` / `changeSubscriptionWith`,
 * which own the transition table), the subscription's event and member access events included; the
 * payment event comes first. Payment items carry `revision` (optimistic concurrency of settlements and
 * refunds).
 */

/**
 * The stored payment item: the public fields plus `revision` and, once a refund went through a provider
 * with a Refunds API, `provider_refund_id` (string: the provider's id of the LAST refund the service made,
 * Stripe `re_...`; absent otherwise). The refund is recorded (amount_refunded, status, this id) in the
 * same transaction as its one `payment.refunded` event, so an inbound `charge.refunded` for it finds the
 * payment already holding that refund (its `amount_refunded` equal to the charge's, or `refunded`) and
 * changes nothing.
 */
type StoredPayment = Item & { revision?: number; provider_refund_id?: string };

/** The statuses of a subscription that waits for its first payment (a `subscription_create` payment is for these). */
const AWAITING_FIRST_PAYMENT: readonly SubscriptionStatus[] = ['pending', 'incomplete'];

/** The provider whose payments the creator records (DESIGN D16); other providers report theirs themselves. */
const RECORDING_PROVIDER: PaymentProvider = 'manual';

const notFound = (paymentId: string) => new ProblemError('NOT_FOUND', `No payment ${paymentId}.`);

/** The public payment of a stored item. */
function toPayment(item: Item): Payment {
  return {
    id: item.id as string,
    project_id: item.project_id as string,
    subscriber_id: item.subscriber_id as string,
    subscription_id: item.subscription_id as string,
    amount: item.amount as number,
    amount_refunded: Number(item.amount_refunded ?? 0),
    currency: item.currency as string,
    status: item.status as PaymentStatus,
    provider: item.provider as PaymentProvider,
    provider_payment_id: (item.provider_payment_id as string | null | undefined) ?? null,
    billing_reason: item.billing_reason as BillingReason,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/**
 * The D15 trigger a payment's outcome fires on its subscription, or null when it moves nothing (DESIGN
 * D15, D16). Pure. A `succeeded` payment fires `payment_succeeded`, a `failed` one `payment_failed`,
 * where the transition table has a row for the subscription's status:
 * - a `subscription_create` payment only while the subscription awaits its first payment (pending,
 *   incomplete): succeeded → activated. A FAILED first payment has no row (pending and incomplete have no
 *   `payment_failed` transition; "first payment failed → incomplete" is a creation row only), so it is
 *   recorded and the subscription stays as it is — the 23-hour incomplete expiry still runs;
 * - a `renewal` payment: succeeded on trialing (trial ended, paid) → activated, on active → renewed (the
 *   period advances), on past_due / unpaid → activated; failed on trialing / active → past_due;
 * - a `manual` payment (outside the billing cycle) and a pending one: nothing.
 * Every other pair (e.g. a payment for a paused, suspended, canceled or expired subscription, or a
 * renewal that fails again while past_due) has no row: the payment is recorded, the subscription is
 * left unchanged.
 */
function paymentTrigger(payment: Pick<Payment, 'status' | 'billing_reason'>, subscription: Pick<Subscription, 'status'>): SubscriptionTrigger | null {
  if (payment.billing_reason === 'manual') return null;
  if (payment.status !== 'succeeded' && payment.status !== 'failed') return null;
  const awaitingFirst = AWAITING_FIRST_PAYMENT.includes(subscription.status);
  if ((payment.billing_reason === 'subscription_create') !== awaitingFirst) return null;
  const trigger: SubscriptionTrigger = payment.status === 'succeeded' ? 'payment_succeeded' : 'payment_failed';
  return ruleFor(subscription.status, trigger) ? trigger : null;
}

/** The stored item of a new payment (GSI keys for the project's list, revision 1). */
function storedPayment(teamId: string, payment: Payment): StoredPayment {
  return {
    ...keys.payment(teamId, payment.id),
    entity: entity.payment,
    team_id: teamId,
    [secondaryIndex.partitionKey]: keys.projectPaymentsIndex(teamId, payment.project_id),
    [secondaryIndex.sortKey]: keys.projectPaymentsIndexSortKey(payment.created_at, payment.id),
    ...payment,
    revision: 1,
  };
}

/** The data of a `payment.*` event: the payment, its subscription after the change, its subscriber (consented contact data; the fan-out redacts per endpoint owner, D10). */
function eventData(payment: Payment, change: SubscriptionChange) {
  return { payment, subscription: change.after, subscriber: change.subscriber };
}

/** The `payment.*` event of a payment's current status. */
const eventOf = (status: PaymentStatus) => `payment.${status}` as const;

/** Adds a new payment, its subscriber index item and its event to `tx`. */
function writeNewPayment(tx: Transaction, teamId: string, payment: Payment, change: SubscriptionChange): void {
  tx.put(storedPayment(teamId, payment), { condition: 'attribute_not_exists(pk)' });
  tx.put(
    {
      pk: keys.subscriberPaymentsPartition(teamId, payment.project_id, payment.subscriber_id),
      sk: keys.subscriberPaymentSortKey(payment.created_at, payment.id),
      entity: entity.subscriberPayment,
      team_id: teamId,
      payment_id: payment.id,
    },
    { condition: 'attribute_not_exists(pk)' },
  );
  tx.emit({ type: eventOf(payment.status), projectId: payment.project_id, data: eventData(payment, change) });
}

/** Adds the update of a payment to `next` (conditional on the revision read) to `tx`, with the provider's refund id when a refund made one. */
function writePaymentUpdate(tx: Transaction, teamId: string, item: StoredPayment, next: Payment, providerRefundId: string | null = null): void {
  const revision = Number(item.revision ?? 0);
  tx.update(keys.payment(teamId, next.id), {
    expression: `SET #status = :status, amount_refunded = :amount_refunded, updated_at = :updated_at, revision = :next_revision${providerRefundId ? ', provider_refund_id = :provider_refund_id' : ''}`,
    condition: 'attribute_exists(pk) AND revision = :revision',
    names: { '#status': 'status' },
    values: {
      ':status': next.status,
      ':amount_refunded': next.amount_refunded,
      ':updated_at': next.updated_at,
      ':revision': revision,
      ':next_revision': revision + 1,
      ...(providerRefundId ? { ':provider_refund_id': providerRefundId } : {}),
    },
  });
}

/** The stored payment of the principal's team (strongly consistent). Errors: NOT_FOUND (absent, foreign, out of scope). */
async function loadPayment(store: Store, principal: Principal, paymentId: string): Promise<StoredPayment> {
  const item = await store.get(keys.payment(principal.teamId, paymentId));
  if (!item || !canAccessProject(principal, item.project_id as string)) throw notFound(paymentId);
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
 * A sort-key condition over `attribute` for a date range (`from` inclusive, `to` exclusive; keys are
 * `<prefix><time>#<id>`, so the bare `<prefix><time>` bounds sort before every key of that time).
 */
function rangeCondition(attribute: string, prefix: string, from: string | null, to: string | null): { expression: string; values: Record<string, unknown> } {
  if (from !== null && to !== null) return { expression: `${attribute} BETWEEN :from AND :to`, values: { ':from': `${prefix}${from}`, ':to': `${prefix}${to}` } };
  if (from !== null) return { expression: `${attribute} >= :from`, values: { ':from': `${prefix}${from}` } };
  if (to !== null) return { expression: `${attribute} < :to`, values: { ':to': `${prefix}${to}` } };
  return { expression: `begins_with(${attribute}, :prefix)`, values: { ':prefix': prefix } };
}

/**
 * Lists a project's payments, newest first, paged (DESIGN D12): optionally only a subscriber's
 * (`subscriber_id`: the subscriber's index items, then one BatchGet — never a scan), only those created
 * in `[created_after, created_before)` (a key condition, on either list), only a status's or a
 * provider's (filters of the page read, so a page may be short while `next_cursor` is set).
 * Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED (created_before not
 * after created_after; a cursor of another list).
 */
export async function listPayments(store: Store, principal: Principal, projectId: string, query: Omit<ListPaymentsQuery, 'limit'> & { limit: number }): Promise<Page<Payment>> {
  requireProjectAccess(principal, projectId);
  const teamId = principal.teamId;
  const from = query.created_after ? keyTime(query.created_after) : null;
  const to = query.created_before ? keyTime(query.created_before) : null;
  if (from !== null && to !== null && from >= to) {
    throw new ProblemError('VALIDATION_FAILED', 'The date range is empty: created_before must be after created_after.', {
      errors: [{ path: 'created_before', message: 'must be after created_after' }],
    });
  }
  const matches = (payment: Payment) => (!query.status || payment.status === query.status) && (!query.provider || payment.provider === query.provider);
  const projectExists = store.get(keys.project(teamId, projectId), { projection: 'pk' });
  if (query.subscriber_id) {
    const partition = keys.subscriberPaymentsPartition(teamId, projectId, query.subscriber_id);
    const startKey = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.subscriberPayment });
    const range = rangeCondition('sk', sortKeyPrefix.subscriberPayment, from, to);
    const [project, index] = await Promise.all([
      projectExists,
      store.query({
        KeyConditionExpression: `pk = :pk AND ${range.expression}`,
        ExpressionAttributeValues: { ':pk': partition, ...range.values },
        ScanIndexForward: false,
        Limit: query.limit,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    ]);
    if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
    const ids = index.items.map((item) => item.payment_id as string);
    const items = await store.batchGet(ids.map((id) => keys.payment(teamId, id)));
    const byId = new Map(items.map((item) => [item.id as string, toPayment(item)]));
    const data = ids.flatMap((id) => {
      const payment = byId.get(id);
      return payment && matches(payment) ? [payment] : [];
    });
    return { data, next_cursor: encodeCursor(index.lastEvaluatedKey) };
  }
  const partition = keys.projectPaymentsIndex(teamId, projectId);
  const startKey = decodeCursor(query.cursor, partition, { partitionAttribute: secondaryIndex.partitionKey, keyAttributes: secondaryIndex.cursorAttributes, sortKeyPrefix: sortKeyPrefix.payment });
  const range = from !== null || to !== null ? rangeCondition('#gsi_sk', '', from, to) : null;
  const filters: string[] = [];
  const names: Record<string, string> = { '#gsi_pk': secondaryIndex.partitionKey, ...(range ? { '#gsi_sk': secondaryIndex.sortKey } : {}) };
  const values: Record<string, unknown> = { ':pk': partition, ...range?.values };
  if (query.status) {
    filters.push('#status = :status');
    names['#status'] = 'status';
    values[':status'] = query.status;
  }
  if (query.provider) {
    filters.push('provider = :provider');
    values[':provider'] = query.provider;
  }
  const [project, result] = await Promise.all([
    projectExists,
    store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: range ? `#gsi_pk = :pk AND ${range.expression}` : '#gsi_pk = :pk',
      FilterExpression: filters.length ? filters.join(' AND ') : undefined,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ScanIndexForward: false,
      Limit: query.limit,
      ExclusiveStartKey: startKey,
    }),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return { data: result.items.map(toPayment), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}

// ---------------------------------------------------------------------------------------------------
// Record
// ---------------------------------------------------------------------------------------------------

const invalid = (detail: string, errors: FieldError[]) => new ProblemError('VALIDATION_FAILED', detail, { errors });

/**
 * The provider whose payments the creator records on this project: `manual` must be connected.
 * Errors: CONFLICT (no provider connected, or another one, whose payments it reports itself).
 */
function recordingProvider(project: Project): PaymentProvider {
  const connected = project.payment_provider?.provider;
  if (connected === RECORDING_PROVIDER) return connected;
  if (!connected) {
    throw new ProblemError('CONFLICT', `Project ${project.id} has no payment provider connected: connect manual first (PUT /v1/projects/${project.id}/payment-provider) to record payments.`);
  }
  throw new ProblemError('CONFLICT', `Project ${project.id} is connected to ${connected}, which reports its payments itself; only the manual provider takes recorded payments.`);
}

/**
 * A new payment of `subscription` (DESIGN D16) as first written: nothing refunded yet, created and
 * updated at `nowIso`. `amount` in the currency's MINOR unit; `currency` ISO 4217 upper case. The one
 * builder of new payments (recorded, first payments of new subscriptions, provider-reported).
 */
export function newPayment(facts: {
  id: string;
  subscription: Pick<Subscription, 'id' | 'project_id' | 'subscriber_id'>;
  amount: number;
  currency: string;
  status: Payment['status'];
  provider: PaymentProvider;
  providerPaymentId: string | null;
  billingReason: BillingReason;
  nowIso: string;
}): Payment {
  return {
    id: facts.id,
    project_id: facts.subscription.project_id,
    subscriber_id: facts.subscription.subscriber_id,
    subscription_id: facts.subscription.id,
    amount: facts.amount,
    amount_refunded: 0,
    currency: facts.currency,
    status: facts.status,
    provider: facts.provider,
    provider_payment_id: facts.providerPaymentId,
    billing_reason: facts.billingReason,
    created_at: facts.nowIso,
    updated_at: facts.nowIso,
  };
}

/** The amount and currency of a recorded payment: given, or the plan's price and currency. Errors: VALIDATION_FAILED (another currency). */
function priceOf(input: Pick<RecordPaymentRequest, 'amount' | 'currency'>, plan: Plan): { amount: number; currency: string } {
  if (input.currency !== undefined && input.currency !== plan.currency) {
    throw invalid(`Plan ${plan.id} is priced in ${plan.currency}: a payment for it is in ${plan.currency}.`, [{ path: 'currency', message: `must be ${plan.currency}, the plan\u2019s currency` }]);
  }
  if (input.amount === undefined && plan.amount === 0) {
    throw invalid(`Plan ${plan.id} is free: give the amount paid.`, [{ path: 'amount', message: 'is required for a payment on a free plan' }]);
  }
  return { amount: input.amount ?? plan.amount, currency: plan.currency };
}

/**
 * The billing reason of a payment recorded for `subscription`: given, or `subscription_create` while it
 * awaits its first payment (pending, incomplete) and `renewal` otherwise. Errors: CONFLICT (a given
 * `subscription_create` for a subscription not awaiting its first payment, or `renewal` for one that does).
 */
function billingReasonFor(given: BillingReason | undefined, subscription: Subscription): BillingReason {
  const awaitingFirst = AWAITING_FIRST_PAYMENT.includes(subscription.status);
  if (given === 'subscription_create' && !awaitingFirst) {
    throw new ProblemError('CONFLICT', `Subscription ${subscription.id} is ${subscription.status}: a subscription_create payment is only for a subscription awaiting its first payment (pending or incomplete); record a renewal or manual payment.`);
  }
  if (given === 'renewal' && awaitingFirst) {
    throw new ProblemError('CONFLICT', `Subscription ${subscription.id} is ${subscription.status}, awaiting its first payment: record a subscription_create (or manual) payment, not a renewal.`);
  }
  return given ?? (awaitingFirst ? 'subscription_create' : 'renewal');
}

/**
 * Records a payment of the `manual` provider (`POST /v1/projects/{project_id}/payments`, DESIGN D16) and
 * applies what its outcome drives (D15, {@link paymentTrigger}), in ONE transaction with its
 * `payment.pending|succeeded|failed` event, the subscription's event and member access events:
 * - with `subscription_id`: a payment for that subscription of the project;
 * - with `subscriber_id` and `plan_id`: the first payment of a NEW subscription billed through the
 *   provider (source `provider`; also needs `project-subscription:create`), created pending (pending
 *   payment), incomplete (failed) or active (succeeded) — D15's "(new)" row, `subscription.created`.
 * Amount and currency default to the plan's price (the currency must be the plan's). Returns the payment.
 * Errors: NOT_FOUND (project, subscription, subscriber or plan absent, foreign, out of scope or of
 * another project); VALIDATION_FAILED (neither or both forms, another currency, a free plan's first
 * payment, a billing reason that is not subscription_create for a new subscription);
 * TOKEN_MISSING_ABILITY (a new subscription without `project-subscription:create`); CONFLICT (no manual
 * provider connected, billing reason against the subscription's status, archived project, inactive plan,
 * banned subscriber, or a subscription that kept changing).
 */
export async function recordPayment(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, input: RecordPaymentRequest): Promise<Payment> {
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const provider = recordingProvider(project);
  const newSubscription = input.subscriber_id !== undefined || input.plan_id !== undefined;
  if (input.subscription_id !== undefined && newSubscription) {
    throw invalid('Give either subscription_id, or subscriber_id and plan_id for a new subscription, not both.', [{ path: 'subscription_id', message: 'must be omitted with subscriber_id and plan_id' }]);
  }
  if (input.subscription_id === undefined && !newSubscription) {
    throw invalid('Give the subscription the payment is for (subscription_id), or subscriber_id and plan_id for a new subscription.', [{ path: 'subscription_id', message: 'is required without subscriber_id and plan_id' }]);
  }
  const paymentId = newUuid();
  if (input.subscription_id === undefined) return recordFirstPayment(runtime, principal, projectId, provider, paymentId, input);
  const subscriptionId = input.subscription_id;
  return retryOnLostRace(async () => {
    let payment: Payment | undefined;
    await changeSubscriptionWith(
      runtime,
      principal,
      subscriptionId,
      (subscription, plan) => {
        if (subscription.project_id !== projectId) throw new ProblemError('NOT_FOUND', `No subscription ${subscriptionId} in project ${projectId}.`);
        const now = isoTime(runtime.clock.nowMs());
        payment = newPayment({
          id: paymentId,
          subscription,
          ...priceOf(input, plan),
          status: input.status,
          provider,
          providerPaymentId: input.provider_payment_id ?? null,
          billingReason: billingReasonFor(input.billing_reason, subscription),
          nowIso: now,
        });
        const trigger = paymentTrigger(payment, subscription);
        return trigger ? { trigger } : null;
      },
      (tx, change) => writeNewPayment(tx, principal.teamId, payment!, change),
    );
    return payment!;
  }, { exhausted: () => new ProblemError('CONFLICT', `Subscription ${subscriptionId} kept changing while this request ran; read it again and retry.`) });
}

/** The first payment of a new subscription billed through `provider` (see {@link recordPayment}). */
async function recordFirstPayment(runtime: UnitOfWorkRuntime, principal: Principal, projectId: string, provider: PaymentProvider, paymentId: string, input: RecordPaymentRequest): Promise<Payment> {
  const errors: FieldError[] = [];
  if (input.subscriber_id === undefined) errors.push({ path: 'subscriber_id', message: 'is required with plan_id' });
  if (input.plan_id === undefined) errors.push({ path: 'plan_id', message: 'is required with subscriber_id' });
  if (input.billing_reason !== undefined && input.billing_reason !== 'subscription_create') errors.push({ path: 'billing_reason', message: 'must be subscription_create (or omitted) for a new subscription' });
  if (errors.length) throw invalid('A new subscription\u2019s first payment needs subscriber_id and plan_id, and its billing reason is subscription_create.', errors);
  requireAbility(principal, 'project-subscription:create');
  const plan = await getPlan(runtime.store, principal, input.plan_id!);
  if (plan.project_id !== projectId) throw new ProblemError('NOT_FOUND', `No plan ${input.plan_id} in project ${projectId}.`);
  if (plan.amount === 0) throw invalid(`Plan ${plan.id} is free: its subscriptions need no payment (create them with POST /v1/projects/${projectId}/subscriptions).`, [{ path: 'plan_id', message: 'must be a priced plan' }]);
  const price = priceOf(input, plan);
  let payment: Payment | undefined;
  await createSubscription(
    runtime,
    principal,
    projectId,
    { subscriber_id: input.subscriber_id!, plan_id: plan.id },
    {
      billing: { provider, firstPayment: input.status },
      alongside: (tx, change) => {
        payment = newPayment({
          id: paymentId,
          subscription: change.after,
          ...price,
          status: input.status,
          provider,
          providerPaymentId: input.provider_payment_id ?? null,
          billingReason: 'subscription_create',
          nowIso: change.after.created_at,
        });
        writeNewPayment(tx, principal.teamId, payment, change);
      },
    },
  );
  return payment!;
}

// ---------------------------------------------------------------------------------------------------
// Settle and refund
// ---------------------------------------------------------------------------------------------------

/**
 * Runs one change of a stored payment with the subscription change it drives, retrying a lost race
 * (the payment or the subscription changed meanwhile) by reading both again, at most
 * `MAX_ATTEMPTS` times. `plan` decides from the payment as read: the payment after the change,
 * the subscription trigger (or null), and the event data's extra fields. Returns the payment after.
 */
async function changePayment(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  paymentId: string,
  plan: (payment: Payment, subscription: Subscription) => {
    next: Payment;
    decision: { trigger: SubscriptionTrigger; reason?: string | null } | null;
    extra?: { refund: PaymentRefund };
    providerRefundId?: string | null;
  },
): Promise<Payment> {
  return retryOnLostRace(async () => {
    const item = await loadPayment(runtime.store, principal, paymentId);
    const payment = toPayment(item);
    let next: Payment | undefined;
    let extra: { refund: PaymentRefund } | undefined;
    let providerRefundId: string | null = null;
    await changeSubscriptionWith(
      runtime,
      principal,
      payment.subscription_id,
      (subscription) => {
        const planned = plan(payment, subscription);
        next = planned.next;
        extra = planned.extra;
        providerRefundId = planned.providerRefundId ?? null;
        return planned.decision;
      },
      (tx, change) => {
        writePaymentUpdate(tx, principal.teamId, item, next!, providerRefundId);
        tx.emit({ type: eventOf(extra ? 'refunded' : next!.status), projectId: next!.project_id, data: { ...eventData(next!, change), ...extra } });
      },
    );
    return next!;
  }, { exhausted: () => new ProblemError('CONFLICT', `Payment ${paymentId} or its subscription kept changing while this request ran; read it again and retry.`) });
}

/**
 * Settles a pending payment (`POST /v1/payments/{id}`, DESIGN D16): pending → succeeded or failed, its
 * `payment.succeeded` / `payment.failed` event and the D15 transition the outcome drives
 * ({@link paymentTrigger}: e.g. a first payment succeeded → activated; a renewal failed → past_due), in
 * one transaction. Returns the payment. Errors: NOT_FOUND; CONFLICT (the payment is not pending —
 * naming its status — or it kept changing).
 */
export async function settlePayment(runtime: UnitOfWorkRuntime, principal: Principal, paymentId: string, input: SettlePaymentRequest): Promise<Payment> {
  return changePayment(runtime, principal, paymentId, (payment, subscription) => {
    if (payment.status !== 'pending') {
      throw new ProblemError('CONFLICT', `Payment ${paymentId} is ${payment.status}: only a pending payment can be settled (to succeeded or failed).`);
    }
    const next: Payment = { ...payment, status: input.status, updated_at: isoTime(runtime.clock.nowMs()) };
    const trigger = paymentTrigger(next, subscription);
    return { next, decision: trigger ? { trigger } : null };
  });
}

/**
 * The amount a refund request refunds from `payment` (minor units): `input.amount`, or all that is left.
 * Errors: CONFLICT (the payment is not succeeded, naming its status); VALIDATION_FAILED (more than is left).
 */
function refundAmount(payment: Payment, paymentId: string, input: RefundPaymentRequest): number {
  if (payment.status !== 'succeeded') {
    const why = payment.status === 'refunded' ? 'it is already refunded in full' : 'only a succeeded payment can be refunded';
    throw new ProblemError('CONFLICT', `Payment ${paymentId} is ${payment.status}: ${why}.`);
  }
  const left = payment.amount - payment.amount_refunded;
  const amount = input.amount ?? left;
  if (amount > left) {
    throw invalid(`Payment ${paymentId} has ${left} ${payment.currency} (minor units) left to refund.`, [{ path: 'amount', message: `must be at most ${left}, what is left to refund` }]);
  }
  return amount;
}

/**
 * Options of {@link refundPayment}: the provider adapters (the handler passes `paymentProviderAdapters(runtime)`,
 * Stripe included; the default is only `manual`, so this module never imports the Stripe SDK, DESIGN D23)
 * and the retry policy (default the runtime's `IntegrationSettings.retry`).
 */
export interface RefundOptions {
  adapters?: PaymentProviderAdapters;
  retry?: RetryPolicy;
}

/**
 * Makes the refund at the payment's provider, outside any transaction, retrying retryable failures (and
 * errors the adapter throws) per the policy; returns the provider's refund id (null for `manual`). The
 * idempotency key names the payment, what it had refunded before and this amount, so a repeated request
 * after a lost answer makes no second refund at Stripe.
 * Errors: PROVIDER_UNAVAILABLE (unreachable or failing after the retries); CONFLICT (the provider refused:
 * its reason, e.g. Stripe's `charge_already_refunded`, or no credential). The payment is unchanged either way.
 */
async function refundAtProvider(runtime: UnitOfWorkRuntime & IntegrationRuntime, teamId: string, payment: Payment, amount: number, reason: string | null, options: RefundOptions): Promise<string | null> {
  const adapter = (options.adapters ?? { manual: manualPaymentProvider })[payment.provider];
  if (!adapter) throw new ProblemError('PROVIDER_UNAVAILABLE', `No adapter for the payment provider ${payment.provider} is available; nothing was refunded.`);
  const request: RefundRequest = {
    team_id: teamId,
    project_id: payment.project_id,
    payment_id: payment.id,
    provider_payment_id: payment.provider_payment_id,
    amount,
    currency: payment.currency,
    reason,
    idempotency_key: `refund-${payment.id}-${payment.amount_refunded}-${amount}`,
  };
  const result = await retryWhile(
    options.retry ?? retryPolicyOf(runtime),
    async (): Promise<RefundResult> => {
      try {
        return await adapter.refund(request);
      } catch (error) {
        // Only the error's class: a provider's message may carry account details or credentials.
        logger.warn('payment provider refund threw', { provider: payment.provider, payment_id: payment.id, error_name: error instanceof Error ? error.name : typeof error });
        return { ok: false, reason: `The ${payment.provider} provider could not be reached.`, code: null, retryable: true };
      }
    },
    (outcome) => !outcome.ok && outcome.retryable,
  );
  if (result.ok) return result.provider_refund_id;
  if (result.retryable) throw new ProblemError('PROVIDER_UNAVAILABLE', `${result.reason} Payment ${payment.id} is unchanged; retry later.`);
  throw new ProblemError('CONFLICT', `${result.reason} Payment ${payment.id} is unchanged.`);
}

/**
 * Refunds a succeeded payment in full or in part (`POST /v1/payments/{id}/refund`, `refund_payment`,
 * DESIGN D16): `amount` (minor units) defaults to what is left to refund; refunds accumulate in
 * `amount_refunded`, and the payment becomes `refunded` once all of it is refunded (a partial refund
 * keeps it `succeeded`). The refund is first made at the payment's provider, outside any transaction
 * (Stripe: the Refunds API on the PaymentIntent, `provider_payment_id`; manual: nothing to call, the
 * creator refunds outside the service), then recorded with exactly one `payment.refunded` (this refund's
 * amount and reason) and the provider's refund id (`provider_refund_id`, see {@link StoredPayment});
 * `cancel: true` also cancels the subscription at once (`subscription.canceled`, the reason kept as its
 * cancellation reason), in the same transaction. Returns the payment. Errors: NOT_FOUND;
 * VALIDATION_FAILED (an amount above what is left); CONFLICT (the payment is not succeeded — naming its
 * status —, the provider refused, `cancel` on a subscription that cannot be canceled, or a payment that
 * changed while the provider was called); PROVIDER_UNAVAILABLE (502: the provider could not be reached;
 * the payment is unchanged and the request can be retried).
 */
export async function refundPayment(runtime: UnitOfWorkRuntime & IntegrationRuntime, principal: Principal, paymentId: string, input: RefundPaymentRequest, options: RefundOptions = {}): Promise<Payment> {
  const before = toPayment(await loadPayment(runtime.store, principal, paymentId));
  const amount = refundAmount(before, paymentId, input);
  const reason = input.reason ?? null;
  const providerRefundId = await refundAtProvider(runtime, principal.teamId, before, amount, reason, options);
  return changePayment(runtime, principal, paymentId, (payment) => {
    refundAmount(payment, paymentId, input);
    if (payment.amount_refunded !== before.amount_refunded) {
      throw new ProblemError('CONFLICT', `Payment ${paymentId} was refunded by another request while this refund was made at ${payment.provider}; read it again.`);
    }
    const refunded = payment.amount_refunded + amount;
    const next: Payment = { ...payment, amount_refunded: refunded, status: refunded === payment.amount ? 'refunded' : 'succeeded', updated_at: isoTime(runtime.clock.nowMs()) };
    return { next, decision: input.cancel ? { trigger: 'cancel', reason } : null, extra: { refund: { amount, reason } }, providerRefundId };
  });
}

// ---------------------------------------------------------------------------------------------------
// Payments a provider reports (DESIGN D16, D22)
// ---------------------------------------------------------------------------------------------------

/** The payment a provider reports through an inbound event (Stripe: `invoice.paid`, `invoice.payment_failed`). */
export interface ProviderPaymentReport {
  /** Our subscription the payment is for (found through the provider's subscription id). */
  subscriptionId: string;
  projectId: string;
  provider: PaymentProvider;
  /** The provider's payment id (Stripe: the PaymentIntent, `pi_...`); one payment of ours per provider payment. */
  providerPaymentId: string;
  status: 'succeeded' | 'failed';
  /** In the currency's MINOR unit (positive). */
  amount: number;
  /** ISO 4217, upper case. */
  currency: string;
  billingReason: BillingReason;
  /** False: record the payment but move no subscription (an event older than one already applied, DESIGN D15). */
  drivesSubscription: boolean;
  /** The caller's writes in the same transaction (e.g. the provider subscription's last applied event). */
  alongside?: (tx: Transaction) => void;
}

/** What {@link recordProviderPayment} did: the payment as it is now, and whether this report changed anything. */
export interface ProviderPaymentOutcome {
  payment: Payment;
  changed: boolean;
}

/**
 * Records a payment the subscription's provider reports (DESIGN D16, D22): a new provider
 * payment becomes a payment of ours (`payment.succeeded` / `payment.failed`, its lookup item
 * `keys.providerPayment` written with it); a known one moves only forward — pending or failed →
 * succeeded (a retried invoice paid with the same PaymentIntent), pending → failed — and a report of
 * the status it has, or of failed after it succeeded, changes nothing. With `drivesSubscription`, the
 * outcome fires its D15 transition ({@link paymentTrigger}: first payment → activated, renewal → renewed,
 * failed renewal → past_due), in the same transaction as the payment and its event (the payment event
 * first). A lost race re-reads and retries (`MAX_ATTEMPTS`). Errors: NOT_FOUND (the subscription
 * or a referenced payment is gone); CONFLICT (kept changing).
 */
export async function recordProviderPayment(runtime: UnitOfWorkRuntime, principal: Principal, report: ProviderPaymentReport): Promise<ProviderPaymentOutcome> {
  const teamId = principal.teamId;
  const refKey = keys.providerPayment(teamId, report.projectId, report.provider, report.providerPaymentId);
  const paymentId = newUuid();
  return retryOnLostRace(async () => {
    const ref = await runtime.store.get(refKey);
    const nowIso = isoTime(runtime.clock.nowMs());
    if (ref) {
      const item = await loadPayment(runtime.store, principal, ref.payment_id as string);
      const current = toPayment(item);
      const moves = current.status === 'pending' || (current.status === 'failed' && report.status === 'succeeded');
      if (!moves) return { payment: current, changed: false };
      const next: Payment = { ...current, status: report.status, updated_at: nowIso };
      await changeSubscriptionWith(
        runtime,
        principal,
        current.subscription_id,
        (subscription) => {
          const trigger = report.drivesSubscription ? paymentTrigger(next, subscription) : null;
          return trigger ? { trigger } : null;
        },
        (tx, change) => {
          writePaymentUpdate(tx, teamId, item, next);
          tx.emit({ type: eventOf(next.status), projectId: next.project_id, data: eventData(next, change) });
          report.alongside?.(tx);
        },
      );
      return { payment: next, changed: true };
    }
    let payment: Payment | undefined;
    await changeSubscriptionWith(
      runtime,
      principal,
      report.subscriptionId,
      (subscription) => {
        payment = newPayment({
          id: paymentId,
          subscription,
          amount: report.amount,
          currency: report.currency,
          status: report.status,
          provider: report.provider,
          providerPaymentId: report.providerPaymentId,
          billingReason: report.billingReason,
          nowIso,
        });
        const trigger = report.drivesSubscription ? paymentTrigger(payment, subscription) : null;
        return trigger ? { trigger } : null;
      },
      (tx, change) => {
        writeNewPayment(tx, teamId, payment!, change);
        addProviderPaymentRef(tx, teamId, payment!, report.provider, report.providerPaymentId);
        report.alongside?.(tx);
      },
    );
    return { payment: payment!, changed: true };
  }, { exhausted: () => new ProblemError('CONFLICT', `Subscription ${report.subscriptionId} or its payment kept changing while the provider\u2019s event was applied; it will be sent again.`) });
}

/**
 * Adds to `tx` the lookup item of a provider payment (`keys.providerPayment` → `payment_id`, `subscription_id`), conditional
 * on it not existing (a second payment for the same provider payment is a lost race).
 */
export function addProviderPaymentRef(tx: Transaction, teamId: string, payment: Payment, provider: PaymentProvider, providerPaymentId: string): void {
  tx.put(
    { ...keys.providerPayment(teamId, payment.project_id, provider, providerPaymentId), entity: entity.providerPayment, team_id: teamId, project_id: payment.project_id, payment_id: payment.id, subscription_id: payment.subscription_id },
    { condition: 'attribute_not_exists(pk)' },
  );
}

/**
 * Adds a new payment of a subscription being created (its first payment, e.g. a Stripe Checkout in
 * payment mode) to the creation's transaction: the payment, its subscriber index item and its
 * `payment.*` event (DESIGN D16). `change` is the creation as the subscriptions module reports it.
 */
export function addPaymentOfNewSubscription(tx: Transaction, teamId: string, payment: Payment, change: SubscriptionChange): void {
  writeNewPayment(tx, teamId, payment, change);
}

/**
 * Records a refund the provider reports (DESIGN D16; Stripe `charge.refunded`): `totalRefunded` is the
 * provider's CUMULATIVE refunded amount of the payment (minor units). Only what exceeds our
 * `amount_refunded` is new: it is recorded (the payment becomes `refunded` once all of it is refunded)
 * with ONE `payment.refunded` carrying that amount and `reason`. A refund already recorded — through the
 * Refunds API call of `refund_payment`, or an earlier event — changes nothing and emits nothing.
 * Returns null when no payment of ours has that provider payment id. Errors: NOT_FOUND (payment gone);
 * CONFLICT (kept changing).
 */
export async function recordProviderRefund(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  ref: { projectId: string; provider: PaymentProvider; providerPaymentId: string },
  totalRefunded: number,
  reason: string | null,
): Promise<ProviderPaymentOutcome | null> {
  const lookup = await runtime.store.get(keys.providerPayment(principal.teamId, ref.projectId, ref.provider, ref.providerPaymentId));
  if (!lookup) return null;
  const paymentId = lookup.payment_id as string;
  const current = toPayment(await loadPayment(runtime.store, principal, paymentId));
  const refundable = (payment: Payment) => payment.status === 'succeeded' && Math.min(totalRefunded, payment.amount) > payment.amount_refunded;
  if (!refundable(current)) return { payment: current, changed: false };
  let unchanged: Payment | undefined;
  const payment = await changePayment(runtime, principal, paymentId, (read) => {
    if (!refundable(read)) {
      // Recorded meanwhile (the Refunds API call's own record): leave it as it is.
      unchanged = read;
      throw new ProblemError('CONFLICT', `Payment ${paymentId} is ${read.status} with ${read.amount_refunded} refunded: nothing new to record.`);
    }
    const refunded = Math.min(totalRefunded, read.amount);
    const next: Payment = { ...read, amount_refunded: refunded, status: refunded === read.amount ? 'refunded' : 'succeeded', updated_at: isoTime(runtime.clock.nowMs()) };
    return { next, decision: null, extra: { refund: { amount: refunded - read.amount_refunded, reason } } };
  }).catch((error: unknown) => {
    if (unchanged) return null;
    throw error;
  });
  return payment ? { payment, changed: true } : { payment: unchanged!, changed: false };
}
