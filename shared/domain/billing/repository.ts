import { isoTime } from '../../clock.js';
import { completeDeadline, deadlineItem, scheduleDeadline, type Deadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { ProblemError } from '../../errors.js';
import { newUuid } from '../../ids.js';
import { logger } from '../../logger.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from '../../store/keys.js';
import { outsideRequestScope } from '../../store/request-scope.js';
import { ConditionFailedError, decodeCursor, encodeCursor, type Item, type Page, type Store } from '../../store/store.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { ConcurrentChange, retryLostRaces } from '../roles/policy.js';
import { addInterval } from '../subscriptions/lifecycle.js';
import {
  BILLING_CURRENCY,
  BILLING_TIERS,
  DEFAULT_TIER,
  GRACE_PERIOD_MS,
  TIER_LIMITS,
  TIER_PRICES,
  USAGE_METRICS,
  type BillingAccount,
  type BillingInvoice,
  type BillingOverview,
  type BillingStatus,
  type BillingTier,
  type BillingUsage,
  type ListBillingInvoicesQuery,
  type UsageMetric,
} from './schema.js';

/**
 * Persistence and use cases of the creator's own billing (DESIGN D20).
 *
 * Storage (keys in `shared/store/keys.ts`):
 * - the team item holds the tier (`billing_tier`, absent = `free`) and one usage counter per metric
 *   ({@link USAGE_COUNTERS}); a create adds 1 to its counter in its own transaction on condition that
 *   the tier's limit is not reached ({@link countUsage}) — the condition names every tier's limit, so no
 *   read is needed — and a delete subtracts 1;
 * - the billing account item holds the status, the grace period, the period anchor (periods are whole
 *   months from `anchor_at`, else from the team's creation), the unpaid invoices, the invoice sequence,
 *   one "limit reached this period" marker per metric and a `revision` for optimistic concurrency;
 * - invoices are items of the team's partition, listed newest first through the sparse GSI.
 *
 * Invoices (paid tiers only; a `free` team gets none): moving from free to a paid tier starts a new
 * period at once with its invoice (as Stripe Billing resets the billing cycle anchor); at each later
 * period start the `billing.period` deadline issues the next invoice at the tier of that moment (no
 * proration between paid tiers). Payment results come from the operator (CLI) — or, later, the
 * operator's Stripe account — through {@link markInvoicePaid} and {@link markInvoicePaymentFailed}.
 */

/** The team item's attribute holding the tier (absent = {@link DEFAULT_TIER}). */
export const TIER_ATTRIBUTE = 'billing_tier';

/**
 * The team item's counter of each metric. `webhook_endpoint_count` is the D8 counter of the 50-endpoint
 * cap, shared with the tier limit (one counter).
 */
const USAGE_COUNTERS = {
  projects: 'project_count',
  subscribers: 'subscriber_count',
  webhook_endpoints: 'webhook_endpoint_count',
  team_members: 'team_member_count',
} as const satisfies Record<UsageMetric, string>;

/** How each metric is named in problem details. */
const METRIC_NOUNS: Record<UsageMetric, string> = { projects: 'projects', subscribers: 'subscribers', webhook_endpoints: 'webhook endpoints', team_members: 'team members' };

/** The deadline kinds of billing (see `DeadlineKind`). */
const PERIOD_DEADLINE = 'billing.period' as const;
const GRACE_DEADLINE = 'billing.grace_period' as const;

/** The billing account item as stored (every attribute optional: a team that never touched billing has none). */
interface StoredBilling {
  status?: BillingStatus;
  anchor_at?: string;
  grace_period_ends_at?: string | null;
  locked_at?: string | null;
  past_due_invoice_ids?: string[];
  invoice_sequence?: number;
  revision?: number;
}

/** What the billing use cases read: the team item and the billing account item (absent when never written). */
interface BillingRead {
  team: Item;
  billing: StoredBilling;
}

/** The tier recorded on a team item. */
function tierOf(team: Item): BillingTier {
  const tier = team[TIER_ATTRIBUTE];
  return (BILLING_TIERS as readonly unknown[]).includes(tier) ? (tier as BillingTier) : DEFAULT_TIER;
}

/** A counter of the team item (absent = 0; never below 0 in what is shown). */
function usageCount(team: Item, metric: UsageMetric): number {
  return Math.max(0, Number(team[USAGE_COUNTERS[metric]] ?? 0));
}

/**
 * The monthly period containing `atMs` for periods anchored at `anchorMs` (epoch MILLISECONDS): whole
 * calendar months from the anchor (day clamped to the month's end, as subscriptions renew). Before the
 * anchor, the first period.
 */
export function periodContaining(anchorMs: number, atMs: number): { startMs: number; endMs: number } {
  const anchor = new Date(anchorMs);
  const at = new Date(atMs);
  let months = Math.max(0, (at.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + at.getUTCMonth() - anchor.getUTCMonth());
  while (months > 0 && addInterval(anchorMs, 'month', months) > atMs) months--;
  while (addInterval(anchorMs, 'month', months + 1) <= atMs) months++;
  return { startMs: addInterval(anchorMs, 'month', months), endMs: addInterval(anchorMs, 'month', months + 1) };
}

function anchorOf(read: BillingRead): number {
  return Date.parse(read.billing.anchor_at ?? String(read.team.created_at));
}

/** The public billing account of what was read, at `nowMs`. */
function accountOf(teamId: string, read: BillingRead, nowMs: number): BillingAccount {
  const tier = tierOf(read.team);
  const period = periodContaining(anchorOf(read), nowMs);
  return {
    team_id: teamId,
    tier,
    status: read.billing.status ?? 'ok',
    limits: { ...TIER_LIMITS[tier] },
    current_period_start: isoTime(period.startMs),
    current_period_end: isoTime(period.endMs),
    grace_period_ends_at: read.billing.grace_period_ends_at ?? null,
    locked_at: read.billing.locked_at ?? null,
  };
}

function usageOf(team: Item): BillingUsage {
  return Object.fromEntries(USAGE_METRICS.map((metric) => [metric, usageCount(team, metric)])) as BillingUsage;
}

/** Reads the team item and the billing account item (one BatchGetItem). Errors: NOT_FOUND when the team does not exist. */
async function readBilling(store: Store, teamId: string): Promise<BillingRead> {
  const items = await store.batchGet([keys.team(teamId), keys.billingAccount(teamId)]);
  const team = items.find((item) => item.sk === keys.team(teamId).sk);
  if (!team) throw new ProblemError('NOT_FOUND', `No team ${teamId}.`);
  const billing = (items.find((item) => item.sk === keys.billingAccount(teamId).sk) ?? {}) as StoredBilling;
  return { team, billing };
}

/**
 * `GET /v1/billing`: the team's tier, limits, usage (the counters), status and current period.
 * Errors: NOT_FOUND when the team does not exist.
 */
export async function getBillingOverview(runtime: Pick<UnitOfWorkRuntime, 'store' | 'clock'>, teamId: string): Promise<BillingOverview> {
  const read = await readBilling(runtime.store, teamId);
  return { ...accountOf(teamId, read, runtime.clock.nowMs()), usage: usageOf(read.team) };
}

function toInvoice(item: Item): BillingInvoice {
  return {
    id: item.id as string,
    team_id: item.team_id as string,
    number: item.number as string,
    tier: item.tier as BillingTier,
    status: item.status as BillingInvoice['status'],
    amount_due: Number(item.amount_due),
    amount_paid: Number(item.amount_paid),
    currency: item.currency as string,
    period_start: item.period_start as string,
    period_end: item.period_end as string,
    due_at: (item.due_at as string | null | undefined) ?? null,
    attempt_count: Number(item.attempt_count ?? 0),
    last_payment_error: (item.last_payment_error as string | null | undefined) ?? null,
    paid_at: (item.paid_at as string | null | undefined) ?? null,
    created_at: item.created_at as string,
    updated_at: item.updated_at as string,
  };
}

/** `GET /v1/billing/invoices/{id}`: one invoice of the team. Errors: NOT_FOUND (absent or another team's). */
export async function getBillingInvoice(store: Store, teamId: string, invoiceId: string): Promise<BillingInvoice> {
  const item = await store.get(keys.billingInvoice(teamId, invoiceId));
  if (!item) throw new ProblemError('NOT_FOUND', `No invoice ${invoiceId}.`);
  return toInvoice(item);
}

/**
 * `GET /v1/billing/invoices`: the team's invoices, newest first, paged (DESIGN D12), optionally only one
 * `status` (applied by DynamoDB, so a page may be short while `next_cursor` is set). Errors:
 * VALIDATION_FAILED for a cursor of another list.
 */
export async function listBillingInvoices(store: Store, teamId: string, query: Pick<ListBillingInvoicesQuery, 'limit' | 'cursor' | 'status'>): Promise<Page<BillingInvoice>> {
  const partition = keys.teamInvoicesIndex(teamId);
  const startKey = decodeCursor(query.cursor, partition, { partitionAttribute: secondaryIndex.partitionKey, keyAttributes: secondaryIndex.cursorAttributes, sortKeyPrefix: sortKeyPrefix.billingInvoice });
  const result = await store.query({
    IndexName: secondaryIndex.name,
    KeyConditionExpression: '#gsi_pk = :pk',
    FilterExpression: query.status ? '#status = :status' : undefined,
    ExpressionAttributeNames: { '#gsi_pk': secondaryIndex.partitionKey, ...(query.status ? { '#status': 'status' } : {}) },
    ExpressionAttributeValues: { ':pk': partition, ...(query.status ? { ':status': query.status } : {}) },
    ScanIndexForward: false,
    Limit: query.limit,
    ExclusiveStartKey: startKey,
  });
  return { data: result.items.map(toInvoice), next_cursor: encodeCursor(result.lastEvaluatedKey) };
}

// ---------------------------------------------------------------------------------------------------
// Writes of the billing account
// ---------------------------------------------------------------------------------------------------

/**
 * Writes the billing account's changed attributes in `tx`, on condition that nobody changed it since
 * `read` (its `revision`); a lost race is a {@link ConcurrentChange}, which {@link retryLostRaces}
 * runs again. Usage-limit markers are written apart (they never bump the revision).
 */
function writeBilling(tx: Transaction, teamId: string, read: StoredBilling, next: StoredBilling): void {
  const names: Record<string, string> = { '#entity': 'entity', '#team_id': 'team_id' };
  const values: Record<string, unknown> = { ':entity': entity.billingAccount, ':team_id': teamId, ':one': 1 };
  const sets = ['#entity = :entity', '#team_id = :team_id'];
  for (const [attribute, value] of Object.entries(next)) {
    if (attribute === 'revision') continue;
    names[`#${attribute}`] = attribute;
    values[`:${attribute}`] = value;
    sets.push(`#${attribute} = :${attribute}`);
  }
  const condition = read.revision === undefined ? 'attribute_not_exists(revision)' : 'revision = :revision';
  if (read.revision !== undefined) values[':revision'] = read.revision;
  tx.update(keys.billingAccount(teamId), {
    expression: `SET ${sets.join(', ')} ADD revision :one`,
    condition,
    names,
    values,
    onConditionFailed: () => new ConcurrentChange('The team\u2019s billing account changed meanwhile; retry.'),
  });
}

/**
 * Puts a new open invoice of `tier` for the period `[startMs, endMs)` in `tx` and emits
 * `billing.invoice_created`; returns the invoice and the next invoice sequence number.
 */
function issueInvoice(
  tx: Transaction,
  teamId: string,
  input: { tier: BillingTier; startMs: number; endMs: number; nowIso: string; sequence: number; account: BillingAccount },
): BillingInvoice {
  const id = newUuid();
  const invoice: BillingInvoice = {
    id,
    team_id: teamId,
    number: `INV-${teamId.slice(0, 8).toUpperCase()}-${String(input.sequence).padStart(4, '0')}`,
    tier: input.tier,
    status: 'open',
    amount_due: TIER_PRICES[input.tier],
    amount_paid: 0,
    currency: BILLING_CURRENCY,
    period_start: isoTime(input.startMs),
    period_end: isoTime(input.endMs),
    due_at: isoTime(input.startMs),
    attempt_count: 0,
    last_payment_error: null,
    paid_at: null,
    created_at: input.nowIso,
    updated_at: input.nowIso,
  };
  tx.put(
    {
      ...keys.billingInvoice(teamId, id),
      entity: entity.billingInvoice,
      [secondaryIndex.partitionKey]: keys.teamInvoicesIndex(teamId),
      [secondaryIndex.sortKey]: keys.teamInvoicesIndexSortKey(input.nowIso, id),
      ...invoice,
    },
    { condition: 'attribute_not_exists(pk)' },
  );
  tx.emit({ type: 'billing.invoice_created', projectId: null, data: { billing_account: input.account, invoice } });
  return invoice;
}

function periodDeadline(teamId: string, dueMs: number): Deadline {
  return { teamId, kind: PERIOD_DEADLINE, subjectId: teamId, projectId: null, dueAt: isoTime(dueMs) };
}

function graceDeadline(teamId: string, dueAt: string): Deadline {
  return { teamId, kind: GRACE_DEADLINE, subjectId: teamId, projectId: null, dueAt };
}

/**
 * Moves the team to `tier` (`POST /v1/billing/tier`, `billing set-tier`; DESIGN D20) and emits
 * `billing.tier_changed`. From `free` to a paid tier, a new monthly period starts now with its invoice
 * (`billing.invoice_created`) and the `billing.period` deadline at its end; between paid tiers the
 * period goes on and its next invoice charges the new tier; to `free`, the next period start issues no
 * invoice. Objects beyond the new tier's limits stay; creating more is refused until usage is below.
 * The same tier again changes nothing (no event). Returns the billing account. Errors: NOT_FOUND (no
 * such team), CONFLICT (the team was deleted; the account kept changing).
 */
export async function changeTier(runtime: UnitOfWorkRuntime, teamId: string, tier: BillingTier): Promise<BillingAccount> {
  return retryLostRaces(async () => {
    const read = await readBilling(runtime.store, teamId);
    const nowMs = runtime.clock.nowMs();
    const previous = tierOf(read.team);
    if (read.team.deleted_at) throw new ProblemError('CONFLICT', `Team ${teamId} was deleted.`);
    if (previous === tier) return accountOf(teamId, read, nowMs);
    const nowIso = isoTime(nowMs);
    const startsPaidPeriod = TIER_PRICES[previous] === 0 && TIER_PRICES[tier] > 0;
    const next: StoredBilling = startsPaidPeriod ? { anchor_at: nowIso } : {};
    if (startsPaidPeriod) next.invoice_sequence = (read.billing.invoice_sequence ?? 0) + 1;
    const after: BillingRead = { team: { ...read.team, [TIER_ATTRIBUTE]: tier }, billing: { ...read.billing, ...next } };
    const account = accountOf(teamId, after, nowMs);
    return unitOfWork(runtime, teamId, (tx) => {
      tx.update(keys.team(teamId), {
        expression: 'SET #tier = :tier',
        condition: 'attribute_exists(pk) AND attribute_not_exists(deleted_at)',
        names: { '#tier': TIER_ATTRIBUTE },
        values: { ':tier': tier },
        onConditionFailed: () => new ProblemError('CONFLICT', `Team ${teamId} was deleted.`),
      });
      writeBilling(tx, teamId, read.billing, next);
      tx.emit({ type: 'billing.tier_changed', projectId: null, data: { billing_account: account, previous_tier: previous } });
      if (startsPaidPeriod) {
        const period = periodContaining(nowMs, nowMs);
        issueInvoice(tx, teamId, { tier, startMs: period.startMs, endMs: period.endMs, nowIso, sequence: next.invoice_sequence!, account });
        scheduleDeadline(tx, periodDeadline(teamId, period.endMs));
      }
      return account;
    });
  });
}

/**
 * Runs a deadline's unit of work; when it fails because another run applied (or moved) the deadline
 * first — the deadline item is gone or has another due time — it did nothing and that is success.
 */
async function applyOnce(runtime: UnitOfWorkRuntime, deadline: Deadline, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    const current = await runtime.store.get(keys.deadline(deadline.teamId, deadline.kind, deadline.subjectId));
    if (current && current.due_at === deadline.dueAt) throw error;
  }
}

/**
 * The `billing.period` deadline (DESIGN D20): a new monthly period starts at its due time. On a paid
 * tier it issues the period's invoice (`billing.invoice_created`) and moves the deadline to the period's
 * end; on `free` it issues nothing and the deadline goes (a later move to a paid tier schedules it
 * again). The deadline's move or removal is conditional on its due time in the same transaction, so
 * applying it twice does nothing. A deleted team's deadline is dropped.
 */
export const applyBillingPeriodDeadline: DeadlineHandler = async (runtime, deadline) => {
  const teamId = deadline.teamId;
  const items = await runtime.store.batchGet([keys.team(teamId), keys.billingAccount(teamId)]);
  const team = items.find((item) => item.sk === keys.team(teamId).sk);
  const billing = (items.find((item) => item.sk === keys.billingAccount(teamId).sk) ?? {}) as StoredBilling;
  const tier = team ? tierOf(team) : DEFAULT_TIER;
  if (!team || team.deleted_at || TIER_PRICES[tier] === 0) {
    await applyOnce(runtime, deadline, () => unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline)));
    return;
  }
  const read: BillingRead = { team, billing };
  const startMs = Date.parse(deadline.dueAt);
  const period = periodContaining(anchorOf(read), startMs);
  const nowIso = isoTime(runtime.clock.nowMs());
  const next: StoredBilling = { invoice_sequence: (billing.invoice_sequence ?? 0) + 1 };
  const account = accountOf(teamId, { team, billing: { ...billing, ...next } }, runtime.clock.nowMs());
  await applyOnce(runtime, deadline, () => unitOfWork(runtime, teamId, (tx) => {
    // Moved to the period's end by a put conditional on the due time applied (one write of the deadline item).
    tx.put(deadlineItem(periodDeadline(teamId, period.endMs)), { condition: 'attribute_exists(pk) AND due_at = :due_at', values: { ':due_at': deadline.dueAt } });
    writeBilling(tx, teamId, billing, next);
    issueInvoice(tx, teamId, { tier, startMs: period.startMs, endMs: period.endMs, nowIso, sequence: next.invoice_sequence!, account });
  }));
};

/** Reads an invoice for a payment result. Errors: NOT_FOUND; CONFLICT when it is paid already. */
async function openInvoice(store: Store, teamId: string, invoiceId: string, action: string): Promise<BillingInvoice> {
  const invoice = await getBillingInvoice(store, teamId, invoiceId);
  if (invoice.status !== 'open') throw new ProblemError('CONFLICT', `Invoice ${invoice.number} is ${invoice.status}; only an open invoice can be ${action}.`);
  return invoice;
}

/** The invoice update of a payment result, conditional on the invoice still being open with `attempt_count` as read. */
function writeInvoice(tx: Transaction, teamId: string, read: BillingInvoice, next: BillingInvoice): void {
  tx.update(keys.billingInvoice(teamId, read.id), {
    expression: 'SET #status = :status, amount_paid = :amount_paid, attempt_count = :attempts, last_payment_error = :error, paid_at = :paid_at, updated_at = :now',
    condition: '#status = :open AND attempt_count = :read_attempts',
    names: { '#status': 'status' },
    values: {
      ':status': next.status,
      ':amount_paid': next.amount_paid,
      ':attempts': next.attempt_count,
      ':error': next.last_payment_error,
      ':paid_at': next.paid_at,
      ':now': next.updated_at,
      ':open': 'open',
      ':read_attempts': read.attempt_count,
    },
    onConditionFailed: () => new ConcurrentChange(`Invoice ${read.number} changed meanwhile; retry.`),
  });
}

/**
 * Records that an invoice was paid (operator CLI `billing invoice-paid`, or the operator's Stripe
 * account through `POST /hooks/billing/stripe`, D20, D22): the invoice becomes `paid` (`billing.invoice_paid`). When it was the team's last
 * unpaid invoice, a grace period ends as `recovered` (`billing.grace_period_ended`, its deadline
 * removed) and a lockdown is lifted (`billing.lockdown_lifted`). One transaction. Returns the account
 * and the invoice. Errors: NOT_FOUND (team or invoice), CONFLICT (the invoice is not open; a concurrent change).
 */
export async function markInvoicePaid(runtime: UnitOfWorkRuntime, teamId: string, invoiceId: string): Promise<{ billing_account: BillingAccount; invoice: BillingInvoice }> {
  return retryLostRaces(async () => {
    const [read, invoice] = await Promise.all([readBilling(runtime.store, teamId), openInvoice(runtime.store, teamId, invoiceId, 'paid')]);
    const nowMs = runtime.clock.nowMs();
    const nowIso = isoTime(nowMs);
    const paid: BillingInvoice = { ...invoice, status: 'paid', amount_paid: invoice.amount_due, paid_at: nowIso, updated_at: nowIso };
    const pastDue = (read.billing.past_due_invoice_ids ?? []).filter((id) => id !== invoiceId);
    const status = read.billing.status ?? 'ok';
    const settled = pastDue.length === 0 && status !== 'ok';
    const next: StoredBilling = { past_due_invoice_ids: pastDue, ...(settled ? { status: 'ok', grace_period_ends_at: null, locked_at: null } : {}) };
    const account = accountOf(teamId, { team: read.team, billing: { ...read.billing, ...next } }, nowMs);
    return unitOfWork(runtime, teamId, (tx) => {
      writeInvoice(tx, teamId, invoice, paid);
      writeBilling(tx, teamId, read.billing, next);
      tx.emit({ type: 'billing.invoice_paid', projectId: null, data: { billing_account: account, invoice: paid } });
      if (settled && status === 'grace_period') {
        tx.delete(keys.deadline(teamId, GRACE_DEADLINE, teamId));
        tx.emit({ type: 'billing.grace_period_ended', projectId: null, data: { billing_account: account, outcome: 'recovered' } });
      }
      if (settled && status === 'locked') tx.emit({ type: 'billing.lockdown_lifted', projectId: null, data: { billing_account: account } });
      return { billing_account: account, invoice: paid };
    });
  });
}

/**
 * Records a failed payment of an open invoice (operator CLI `billing invoice-failed`, or the
 * operator's Stripe account through `POST /hooks/billing/stripe`, D20, D22): its `attempt_count` rises (`billing.payment_failed`). A team in
 * good standing enters a 7-day grace period (`billing.grace_period_started`, with the
 * `billing.grace_period` deadline at its end); a team already in grace keeps its end, a locked team
 * stays locked. One transaction. `reason`: why it failed, as the payment provider said (never card
 * data). Returns the account and the invoice. Errors: NOT_FOUND (team or invoice), CONFLICT (the
 * invoice is paid; a concurrent change).
 */
export async function markInvoicePaymentFailed(runtime: UnitOfWorkRuntime, teamId: string, invoiceId: string, reason: string | null): Promise<{ billing_account: BillingAccount; invoice: BillingInvoice }> {
  return retryLostRaces(async () => {
    const [read, invoice] = await Promise.all([readBilling(runtime.store, teamId), openInvoice(runtime.store, teamId, invoiceId, 'failed')]);
    const nowMs = runtime.clock.nowMs();
    const nowIso = isoTime(nowMs);
    const failed: BillingInvoice = { ...invoice, attempt_count: invoice.attempt_count + 1, last_payment_error: reason ?? 'The payment failed.', updated_at: nowIso };
    const pastDue = [...new Set([...(read.billing.past_due_invoice_ids ?? []), invoiceId])];
    const startsGrace = (read.billing.status ?? 'ok') === 'ok';
    const graceEnd = isoTime(nowMs + GRACE_PERIOD_MS);
    const next: StoredBilling = { past_due_invoice_ids: pastDue, ...(startsGrace ? { status: 'grace_period', grace_period_ends_at: graceEnd } : {}) };
    const account = accountOf(teamId, { team: read.team, billing: { ...read.billing, ...next } }, nowMs);
    return unitOfWork(runtime, teamId, (tx) => {
      writeInvoice(tx, teamId, invoice, failed);
      writeBilling(tx, teamId, read.billing, next);
      tx.emit({ type: 'billing.payment_failed', projectId: null, data: { billing_account: account, invoice: failed, attempt_count: failed.attempt_count, next_attempt_at: null } });
      if (startsGrace) {
        scheduleDeadline(tx, graceDeadline(teamId, graceEnd));
        tx.emit({ type: 'billing.grace_period_started', projectId: null, data: { billing_account: account, grace_period_ends_at: graceEnd } });
      }
      return { billing_account: account, invoice: failed };
    });
  });
}

/**
 * The `billing.grace_period` deadline (DESIGN D20): the grace period ended unpaid, so the team is locked
 * (`billing.grace_period_ended` with outcome `locked`, then `billing.lockdown_started`): from now on its
 * creator writes get BILLING_LOCKED until it pays. A team that paid meanwhile (status no longer
 * `grace_period`) only loses the deadline. Applying it twice does nothing (conditional removal).
 */
export const applyGracePeriodDeadline: DeadlineHandler = async (runtime, deadline) => {
  const teamId = deadline.teamId;
  const items = await runtime.store.batchGet([keys.team(teamId), keys.billingAccount(teamId)]);
  const team = items.find((item) => item.sk === keys.team(teamId).sk);
  const billing = (items.find((item) => item.sk === keys.billingAccount(teamId).sk) ?? {}) as StoredBilling;
  if (!team || billing.status !== 'grace_period') {
    await applyOnce(runtime, deadline, () => unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline)));
    return;
  }
  const nowMs = runtime.clock.nowMs();
  const next: StoredBilling = { status: 'locked', grace_period_ends_at: null, locked_at: isoTime(nowMs) };
  const account = accountOf(teamId, { team, billing: { ...billing, ...next } }, nowMs);
  const unpaid = billing.past_due_invoice_ids?.length ?? 0;
  await applyOnce(runtime, deadline, () => unitOfWork(runtime, teamId, (tx) => {
    completeDeadline(tx, deadline);
    writeBilling(tx, teamId, billing, next);
    tx.emit({ type: 'billing.grace_period_ended', projectId: null, data: { billing_account: account, outcome: 'locked' } });
    tx.emit({
      type: 'billing.lockdown_started',
      projectId: null,
      data: { billing_account: account, reason: `${unpaid} invoice(s) of the team\u2019s tier are unpaid 7 days after the first failed payment; creator writes are refused until they are paid.` },
    });
  }));
};

// ---------------------------------------------------------------------------------------------------
// Tier limits
// ---------------------------------------------------------------------------------------------------

/**
 * A create refused by the tier-limit condition of its counter ({@link countUsage}): TIER_LIMIT_REACHED,
 * refined by {@link withinTierLimit} (which knows the usage and the limit, and emits the notice).
 */
class UsageCounterRefused extends ProblemError {
  constructor(readonly metric: UsageMetric) {
    super('TIER_LIMIT_REACHED', `The team\u2019s tier does not allow more ${METRIC_NOUNS[metric]}.`);
  }
}

/**
 * Adds to `tx` the change of `metric`'s counter on the team item (DESIGN D20): `+1` on condition that the
 * team exists and the counter is below its tier's limit — one condition naming every tier's limit
 * (`(tier = free AND count < 3) OR (tier = pro AND count < 20) OR tier = business`), so the create needs
 * no read of the tier — and below `cap` when given (webhook endpoints' D8 cap of 50); `-1` on condition
 * that the team exists. Wrap the unit of work in {@link withinTierLimit}, which turns a refused `+1`
 * into TIER_LIMIT_REACHED (or the cap's problem) and emits `billing.usage_limit_reached`.
 */
export function countUsage(tx: Transaction, teamId: string, metric: UsageMetric, delta: 1 | -1, options: { cap?: number } = {}): void {
  const names: Record<string, string> = { '#count': USAGE_COUNTERS[metric] };
  if (delta === -1) {
    tx.update(keys.team(teamId), { expression: 'ADD #count :delta', condition: 'attribute_exists(pk)', names, values: { ':delta': -1 } });
    return;
  }
  names['#tier'] = TIER_ATTRIBUTE;
  const values: Record<string, unknown> = { ':delta': 1 };
  const below = (name: string) => `(attribute_not_exists(#count) OR #count < ${name})`;
  const tiers = BILLING_TIERS.map((tier) => {
    values[`:tier_${tier}`] = tier;
    const isTier = tier === DEFAULT_TIER ? `(attribute_not_exists(#tier) OR #tier = :tier_${tier})` : `#tier = :tier_${tier}`;
    const limit = TIER_LIMITS[tier][metric];
    if (limit === null) return isTier;
    values[`:limit_${tier}`] = limit;
    return `(${isTier} AND ${below(`:limit_${tier}`)})`;
  });
  const conditions = ['attribute_exists(pk)', `(${tiers.join(' OR ')})`];
  if (options.cap !== undefined) {
    values[':cap'] = options.cap;
    conditions.push(below(':cap'));
  }
  tx.update(keys.team(teamId), { expression: 'ADD #count :delta', condition: conditions.join(' AND '), names, values, onConditionFailed: () => new UsageCounterRefused(metric) });
}

/**
 * Runs `work` — a unit of work holding a {@link countUsage} `+1` of `metric` — and explains a refusal of
 * that counter (DESIGN D20): reads the team item (only on this path) and throws `cap.problem()` when the
 * count reached `cap.max` first (the D8 endpoint cap), else TIER_LIMIT_REACHED (402) naming the tier,
 * the limit and the usage, after emitting `billing.usage_limit_reached` once per metric and monthly
 * period (a marker on the billing account, written outside the request's transaction so the refused
 * request's idempotency and activity items are not taken). Other errors pass through.
 */
export async function withinTierLimit<T>(runtime: UnitOfWorkRuntime, teamId: string, metric: UsageMetric, work: () => Promise<T>, cap?: { max: number; problem: () => ProblemError }): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof UsageCounterRefused) || error.metric !== metric) throw error;
    const read = await readBilling(runtime.store, teamId).catch(() => null);
    if (!read || read.team.deleted_at) throw new ProblemError('CONFLICT', `Team ${teamId} was deleted.`);
    const tier = tierOf(read.team);
    const limit = TIER_LIMITS[tier][metric];
    const usage = usageCount(read.team, metric);
    if (cap && usage >= cap.max && (limit === null || limit >= cap.max)) throw cap.problem();
    if (limit === null) throw new ConcurrentChange(`The team\u2019s ${METRIC_NOUNS[metric]} changed meanwhile; retry.`);
    await noticeUsageLimit(runtime, teamId, read, metric, Math.max(usage, limit), limit);
    throw new ProblemError(
      'TIER_LIMIT_REACHED',
      `The ${tier} tier allows ${limit} ${METRIC_NOUNS[metric]} and the team has ${usage}; delete one or move to a higher tier (POST /v1/billing/tier).`,
    );
  }
}

/** Emits `billing.usage_limit_reached` unless it was emitted for `metric` in the current period already. Never throws. */
async function noticeUsageLimit(runtime: UnitOfWorkRuntime, teamId: string, read: BillingRead, metric: UsageMetric, usage: number, limit: number): Promise<void> {
  const nowMs = runtime.clock.nowMs();
  const account = accountOf(teamId, read, nowMs);
  try {
    await outsideRequestScope(() =>
      unitOfWork(runtime, teamId, (tx) => {
        tx.update(keys.billingAccount(teamId), {
          expression: 'SET #marker = :period, #entity = :entity, #team_id = :team_id',
          condition: 'attribute_not_exists(#marker) OR #marker <> :period',
          names: { '#marker': `limit_reached_${metric}`, '#entity': 'entity', '#team_id': 'team_id' },
          values: { ':period': account.current_period_start, ':entity': entity.billingAccount, ':team_id': teamId },
        });
        tx.emit({ type: 'billing.usage_limit_reached', projectId: null, data: { billing_account: account, metric, usage, limit } });
      }),
    );
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) logger.error('usage limit notice not written', { team_id: teamId, metric, error: error as Error });
  }
}
