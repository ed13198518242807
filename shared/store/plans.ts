import type { Plan, PlanStatus } from '../domain/plans/schema.js';
import { ITEM_ABSENT_CONDITION, allOf, existsAtRevisionOf, setFields, type Condition } from './expressions.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from './keys.js';
import { listFilter, queryPage, type Page } from './pages.js';
import { NO_LIVE_SUBSCRIPTIONS } from './projects.js';
import { revisionOf } from './records.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The plan store (DESIGN D14, D16, D22): one item per plan in its team's partition (`PLAN#<uuid>`), listed per
 * project through the sparse GSI, with `revision` (optimistic concurrency) and `live_subscription_count`
 * (absent = 0). The project's plan set is kept by `projectStore.addPlan` / `removePlan` in the same transaction.
 */

/**
 * The condition a plan change may carry: no live subscriptions (an in-place price edit), passed to `decidePlanUpdate`.
 */
export { NO_LIVE_SUBSCRIPTIONS };

/**
 * The plan store adapter: a plan's read and its project's list (Store port), a new plan's item, and a plan's creation,
 * change, deletion and sync outcome added to a transaction (changes conditional on the revision read).
 */
export const planStore = {
  /** The stored plan item of the team (strongly consistent), or undefined. */
  async read(store: Store, teamId: string, planId: string): Promise<Item | undefined> {
    return store.get(keys.plan(teamId, planId));
  },

  /** The stored item of a new plan (revision 1, indexed under its project by creation time). */
  newItem(teamId: string, plan: Plan): Item {
    return {
      ...keys.plan(teamId, plan.id),
      entity: entity.plan,
      team_id: teamId,
      [secondaryIndex.partitionKey]: keys.projectPlansIndex(teamId, plan.project_id),
      [secondaryIndex.sortKey]: keys.projectPlansIndexSortKey(plan.created_at, plan.id),
      ...plan,
      revision: 1,
    };
  },

  /** Adds to `tx` the put of a new plan item made by {@link planStore.newItem}, only if absent. */
  create(tx: Transaction, item: Item): void {
    tx.put(item, { condition: ITEM_ABSENT_CONDITION.expression });
  },

  /**
   * One page of a project's plans in creation order (D12), optionally only `status` (filtered by DynamoDB, so a
   * page may be short while `next_cursor` is set). Errors: VALIDATION_FAILED (cursor of another list).
   */
  async listPage<T>(
    store: Store,
    teamId: string,
    projectId: string,
    query: { limit: number; cursor?: string; status?: PlanStatus },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    return queryPage(store, {
      index: true,
      partition: keys.projectPlansIndex(teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.plan,
      limit: query.limit,
      cursor: query.cursor,
      map,
      filter: listFilter([{ attribute: 'status', equals: query.status }]),
    });
  },

  /**
   * Adds to `tx` the change of the plan as read to `next` (revision + 1): its fields but `id`, `project_id` and
   * `created_at` are set, an optional field that is undefined in `next` is removed; conditional on the revision
   * read and `condition` (what the decision asked for, e.g. {@link NO_LIVE_SUBSCRIPTIONS}).
   */
  writeChange(tx: Transaction, teamId: string, read: Item, next: Plan, condition?: Condition): void {
    const changed = Object.keys(next).filter(
      (field) => field !== 'id' && field !== 'project_id' && field !== 'created_at',
    ) as (keyof Plan)[];
    const removed = changed.filter((field) => next[field] === undefined);
    const set = setFields(Object.fromEntries(changed.map((field) => [field, next[field]])));
    const guard = allOf(existsAtRevisionOf(read), condition);
    tx.update(keys.plan(teamId, next.id), {
      expression: `SET ${set.clause}, revision = :next_revision${removed.length > 0 ? ` REMOVE ${removed.join(', ')}` : ''}`,
      condition: guard.expression,
      names: { ...set.names, ...guard.names },
      values: { ...set.values, ...guard.values, ':next_revision': revisionOf(entity.plan, read) + 1 },
    });
  },

  /** Adds to `tx` the deletion of the plan as read, conditional on its revision and no live subscriptions. */
  delete(tx: Transaction, teamId: string, read: Item, planId: string): void {
    const guard = allOf(existsAtRevisionOf(read), NO_LIVE_SUBSCRIPTIONS);
    tx.delete(keys.plan(teamId, planId), { condition: guard.expression, values: guard.values });
  },

  /**
   * Adds to `tx` a provider sync's outcome (`sync_status`, provider ids, `synced_at`, `sync_error` of `next`),
   * conditional on the plan's revision being the one read before the provider was called.
   */
  writeSyncOutcome(tx: Transaction, teamId: string, read: Item, next: Plan): void {
    const set = setFields({
      sync_status: next.sync_status,
      payment_provider: next.payment_provider,
      provider_product_id: next.provider_product_id,
      provider_price_id: next.provider_price_id,
      synced_at: next.synced_at,
      sync_error: next.sync_error,
    });
    const guard = existsAtRevisionOf(read);
    tx.update(keys.plan(teamId, next.id), {
      expression: `SET ${set.clause}`,
      condition: guard.expression,
      names: set.names,
      values: { ...set.values, ...guard.values },
    });
  },
};
