import type { ProblemError } from '../errors.js';
import type { Team } from '../domain/teams/schema.js';
import { ITEM_ABSENT_CONDITION, ITEM_EXISTS_CONDITION } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The team store (DESIGN D14, D19): one item per team (`TEAM#<team>`, `TEAM`), soft-deleted by `deleted_at`
 * (absent until then, so conditions test it). The item also holds billing's tier and usage counters
 * (`shared/store/billing.ts`).
 */

/** The team is not deleted. */
const NOT_DELETED = 'attribute_not_exists(deleted_at)';

/**
 * The team store adapter: the team item's read (Store port), and its creation, rename, soft deletion and the
 * not-deleted check, added to a transaction.
 */
export const teamStore = {
  /** The stored team item (strongly consistent), or undefined. */
  async read(store: Store, teamId: string): Promise<Item | undefined> {
    return store.get(keys.team(teamId));
  },

  /** Adds to `tx` the put of a new team item (without `deleted_at`); `exists` is what an existing team id means. */
  create(tx: Transaction, team: Omit<Team, 'deleted_at'>, exists: () => ProblemError): void {
    tx.put(
      { ...keys.team(team.id), entity: entity.team, ...team },
      {
        condition: ITEM_ABSENT_CONDITION.expression,
        onConditionFailed: exists,
      },
    );
  },

  /**
   * Adds to `tx` the team's new name and `updated_at` (ISO), conditional on the team existing undeleted (else
   * `deleted()`).
   */
  rename(tx: Transaction, teamId: string, name: string, updatedAt: string, deleted: () => ProblemError): void {
    tx.update(keys.team(teamId), {
      expression: 'SET #name = :name, updated_at = :now',
      condition: `${ITEM_EXISTS_CONDITION.expression} AND ${NOT_DELETED}`,
      names: { '#name': 'name' },
      values: { ':name': name, ':now': updatedAt },
      onConditionFailed: deleted,
    });
  },

  /**
   * Adds to `tx` the soft deletion of the team at `nowIso`, conditional on it existing undeleted (else `deleted()`).
   */
  markDeleted(tx: Transaction, teamId: string, nowIso: string, deleted: () => ProblemError): void {
    tx.update(keys.team(teamId), {
      expression: 'SET deleted_at = :now, updated_at = :now',
      condition: `${ITEM_EXISTS_CONDITION.expression} AND ${NOT_DELETED}`,
      values: { ':now': nowIso },
      onConditionFailed: deleted,
    });
  },

  /** Adds to `tx` a check that the team is not deleted (else `deleted()`). */
  checkNotDeleted(tx: Transaction, teamId: string, deleted: () => ProblemError): void {
    tx.check(keys.team(teamId), { condition: NOT_DELETED, onConditionFailed: deleted });
  },
};
