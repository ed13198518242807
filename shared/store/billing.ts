import type { ProblemError } from '../errors.js';
import type { BillingInvoice } from '../domain/billing/schema.js';
import { ITEM_ABSENT_CONDITION, ITEM_EXISTS_CONDITION } from './expressions.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from './keys.js';
import { listFilter, queryPage, type Page } from './pages.js';
import type { Item, TransactionItem } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The billing store (DESIGN D14, D20): the tier and usage counters on the team item, the billing account item
 * (`revision`-guarded, with the usage-limit notice markers), the invoices (listed newest first through the
 * sparse GSI) and the billing deadlines' conditional moves.
 */

/** A usage counter's limit in one tier (null: unlimited). */
export interface TierLimit {
  tier: string;
  limit: number | null;
  /** The tier of a team item without a tier attribute. */
  isDefault: boolean;
}

/**
 * The billing store adapter: reads of the team, billing account, invoice and deadline items (Store port), and the
 * writes of usage counters, tier, notices, account, invoices and billing deadlines, each added to a transaction.
 */
export const billingStore = {
  /**
   * The team item and the billing account item (either undefined when absent): one BatchGetItem, strongly consistent.
   */
  async readTeamAndAccount(
    store: Store,
    teamId: string,
  ): Promise<{ team: Item | undefined; account: Item | undefined }> {
    const items = await store.batchGet([keys.team(teamId), keys.billingAccount(teamId)]);
    return {
      team: items.find((item) => item.sk === keys.team(teamId).sk),
      account: items.find((item) => item.sk === keys.billingAccount(teamId).sk),
    };
  },

  /** The billing account item (strongly consistent), or undefined when never written. */
  async readAccount(store: Store, teamId: string): Promise<Item | undefined> {
    return store.get(keys.billingAccount(teamId));
  },

  /** The stored invoice of the team (strongly consistent), or undefined. */
  async readInvoice(store: Store, teamId: string, invoiceId: string): Promise<Item | undefined> {
    return store.get(keys.billingInvoice(teamId, invoiceId));
  },

  /**
   * One page of the team's invoices, newest first (D12), optionally only `status` (filtered by DynamoDB, so a
   * page may be short while `next_cursor` is set). Errors: VALIDATION_FAILED (cursor of another list).
   */
  async listInvoices<T>(
    store: Store,
    teamId: string,
    query: { limit: number; cursor?: string; status?: BillingInvoice['status'] },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    return queryPage(store, {
      index: true,
      partition: keys.teamInvoicesIndex(teamId),
      sortKeyPrefix: sortKeyPrefix.billingInvoice,
      limit: query.limit,
      cursor: query.cursor,
      ascending: false,
      map,
      filter: listFilter([{ attribute: 'status', equals: query.status }]),
    });
  },

  /**
   * Adds to `tx` one more of the team's usage counter `counter`, under one condition naming every tier's limit
   * (no tier read; the tier is the team item's `tierAttribute`) and `cap`; a refusal is `refused()`.
   */
  incrementUsage(
    tx: Transaction,
    teamId: string,
    counter: { attribute: string; tierAttribute: string; limits: readonly TierLimit[]; cap?: number },
    refused: () => ProblemError,
  ): void {
    const names: Record<string, string> = { '#count': counter.attribute, '#tier': counter.tierAttribute };
    const values: Record<string, unknown> = { ':delta': 1 };
    const below = (name: string) => `(attribute_not_exists(#count) OR #count < ${name})`;
    const tiers = counter.limits.map(({ tier, limit, isDefault }) => {
      values[`:tier_${tier}`] = tier;
      const isTier = isDefault ? `(attribute_not_exists(#tier) OR #tier = :tier_${tier})` : `#tier = :tier_${tier}`;
      if (limit === null) return isTier;
      values[`:limit_${tier}`] = limit;
      return `(${isTier} AND ${below(`:limit_${tier}`)})`;
    });
    const conditions = [ITEM_EXISTS_CONDITION.expression, `(${tiers.join(' OR ')})`];
    if (counter.cap !== undefined) {
      values[':cap'] = counter.cap;
      conditions.push(below(':cap'));
    }
    tx.update(keys.team(teamId), {
      expression: 'ADD #count :delta',
      condition: conditions.join(' AND '),
      names,
      values,
      onConditionFailed: refused,
    });
  },

  /** Adds to `tx` one less of the team's usage counter `attribute` (the team must exist). */
  decrementUsage(tx: Transaction, teamId: string, attribute: string): void {
    tx.update(keys.team(teamId), {
      expression: 'ADD #count :delta',
      condition: ITEM_EXISTS_CONDITION.expression,
      names: { '#count': attribute },
      values: { ':delta': -1 },
    });
  },

  /**
   * Adds to `tx` the team's tier (`tierAttribute` = `tier`), conditional on the team existing undeleted (else
   * `deleted()`).
   */
  setTier(tx: Transaction, teamId: string, tierAttribute: string, tier: string, deleted: () => ProblemError): void {
    tx.update(keys.team(teamId), {
      expression: 'SET #tier = :tier',
      condition: `${ITEM_EXISTS_CONDITION.expression} AND attribute_not_exists(deleted_at)`,
      names: { '#tier': tierAttribute },
      values: { ':tier': tier },
      onConditionFailed: deleted,
    });
  },

  /**
   * Adds to `tx` the usage-limit notice marker `marker` = `periodStart` on the billing account, conditional on it
   * not holding that period yet (a failed condition: the notice was given this period).
   */
  markNotice(tx: Transaction, teamId: string, marker: string, periodStart: string): void {
    tx.update(keys.billingAccount(teamId), {
      expression: 'SET #marker = :period, #entity = :entity, #team_id = :team_id',
      condition: 'attribute_not_exists(#marker) OR #marker <> :period',
      names: { '#marker': marker, '#entity': 'entity', '#team_id': 'team_id' },
      values: { ':period': periodStart, ':entity': entity.billingAccount, ':team_id': teamId },
    });
  },

  /**
   * Adds to `tx` the billing account's attributes of `next` (but `revision`, which rises by one), conditional on
   * its revision still being `readRevision` (absent: none yet); a lost race is `changed()`.
   */
  writeAccount(
    tx: Transaction,
    teamId: string,
    readRevision: number | undefined,
    next: Record<string, unknown>,
    changed: () => ProblemError,
  ): void {
    const names: Record<string, string> = { '#entity': 'entity', '#team_id': 'team_id' };
    const values: Record<string, unknown> = { ':entity': entity.billingAccount, ':team_id': teamId, ':one': 1 };
    const sets = ['#entity = :entity', '#team_id = :team_id'];
    for (const [attribute, value] of Object.entries(next)) {
      if (attribute === 'revision') continue;
      names[`#${attribute}`] = attribute;
      values[`:${attribute}`] = value;
      sets.push(`#${attribute} = :${attribute}`);
    }
    const condition = readRevision === undefined ? 'attribute_not_exists(revision)' : 'revision = :revision';
    if (readRevision !== undefined) values[':revision'] = readRevision;
    tx.update(keys.billingAccount(teamId), {
      expression: `SET ${sets.join(', ')} ADD revision :one`,
      condition,
      names,
      values,
      onConditionFailed: changed,
    });
  },

  /** Adds to `tx` a new invoice of the team (indexed by creation time for the newest-first list), only if absent. */
  createInvoice(tx: Transaction, teamId: string, invoice: BillingInvoice): void {
    tx.put(
      {
        ...keys.billingInvoice(teamId, invoice.id),
        entity: entity.billingInvoice,
        [secondaryIndex.partitionKey]: keys.teamInvoicesIndex(teamId),
        [secondaryIndex.sortKey]: keys.teamInvoicesIndexSortKey(invoice.created_at, invoice.id),
        ...invoice,
      },
      { condition: ITEM_ABSENT_CONDITION.expression },
    );
  },

  /**
   * Adds to `tx` an invoice's payment result (`next`'s status, amounts, attempts, error, dates), conditional on
   * the invoice still being open with the `attempt_count` of `read`; a lost race is `changed()`.
   */
  writeInvoicePayment(
    tx: Transaction,
    teamId: string,
    read: BillingInvoice,
    next: BillingInvoice,
    changed: () => ProblemError,
  ): void {
    tx.update(keys.billingInvoice(teamId, read.id), {
      expression:
        'SET #status = :status, amount_paid = :amount_paid, attempt_count = :attempts, last_payment_error = :error, paid_at = :paid_at, updated_at = :now',
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
      onConditionFailed: changed,
    });
  },

  /**
   * The due time (ISO) of the deadline item of (team, kind, subject) as stored now (strongly consistent), or undefined.
   */
  async deadlineDueAt(store: Store, teamId: string, kind: string, subjectId: string): Promise<unknown> {
    return (await store.get(keys.deadline(teamId, kind, subjectId)))?.due_at;
  },

  /**
   * Adds to `tx` the replacement of a deadline item by `nextItem` (same key), conditional on its due time still being
   * `dueAt`.
   */
  moveDeadline(tx: Transaction, nextItem: Item, dueAt: string): void {
    tx.put(nextItem, {
      condition: `${ITEM_EXISTS_CONDITION.expression} AND due_at = :due_at`,
      values: { ':due_at': dueAt },
    });
  },

  /** Adds to `tx` the deletion of the deadline item of (team, kind, subject), whatever its due time. */
  deleteDeadline(tx: Transaction, teamId: string, kind: string, subjectId: string): void {
    tx.delete(keys.deadline(teamId, kind, subjectId));
  },

  /** The transaction ConditionCheck "the team's billing account is not `locked`" (absent counts as not locked). */
  notLockedCheck(teamId: string): Extract<TransactionItem, { ConditionCheck: unknown }> {
    return {
      ConditionCheck: {
        Key: keys.billingAccount(teamId),
        ConditionExpression: 'attribute_not_exists(#status) OR #status <> :locked',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':locked': 'locked' },
      },
    };
  },
};
