import type { ProblemError } from '../errors.js';
import type { Role } from '../domain/roles/schema.js';
import { ITEM_ABSENT_CONDITION, ITEM_EXISTS_CONDITION, allOf, atVersion, readByIds, setFields } from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { decodeCursor, encodeCursor, type Page } from './pages.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The role store (DESIGN D14, D19): a team's own roles are items of its partition (`ROLE#<uuid>`) with a
 * `version` and an `assignment_count`, and a name claim (`ROLE_NAME#<normalized name>`) keeping names unique.
 */

/** A role as stored: the public fields plus its concurrency version and its assignment counter. */
type StoredRoleFields = Role & { version: number; assignment_count: number };

/**
 * The role store adapter: reads and the list of the team's roles (merged with the built-in ones; Store port), and the
 * writes of a role, its name claim and its assignment counter, added to a transaction.
 */
export const roleStore = {
  /** The stored item of one of the team's own roles (strongly consistent), or undefined. */
  async read(store: Store, teamId: string, roleId: string): Promise<Item | undefined> {
    return store.get(keys.role(teamId, roleId));
  },

  /** The stored items of the team's own roles among `roleIds` (strongly consistent), in no particular order. */
  async readMany(store: Store, teamId: string, roleIds: readonly string[]): Promise<Item[]> {
    return readByIds(store, roleIds, (roleId) => keys.role(teamId, roleId));
  },

  /**
   * One page of the team's roles in id order (D12): the team's own (read with `map`, unless `ownRoles` is false)
   * merged with `constants` (the built-in roles) by their would-be sort keys, so one cursor format serves both.
   * Errors: VALIDATION_FAILED (cursor of another list).
   */
  async listPage<T extends { id: string }>(
    store: Store,
    teamId: string,
    query: { limit: number; cursor?: string; ownRoles: boolean },
    constants: readonly T[],
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    const partition = keys.teamPartition(teamId);
    const start = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.role });
    const after = typeof start?.sk === 'string' ? start.sk : '';
    const candidates = constants
      .map((role) => ({ sk: keys.role(teamId, role.id).sk, role }))
      .filter((entry) => entry.sk > after);
    let more = false;
    if (query.ownRoles) {
      const result = await store.query({
        KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
        ExpressionAttributeValues: { ':pk': partition, ':prefix': sortKeyPrefix.role },
        Limit: query.limit,
        ExclusiveStartKey: start,
      });
      for (const item of result.items) {
        const role = map(item);
        candidates.push({ sk: keys.role(teamId, role.id).sk, role });
      }
      more = result.lastEvaluatedKey !== undefined;
    }
    candidates.sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
    const page = candidates.slice(0, query.limit);
    const last = page.at(-1);
    const hasMore = more || candidates.length > page.length;
    return {
      data: page.map((entry) => entry.role),
      next_cursor: hasMore && last ? encodeCursor({ pk: partition, sk: last.sk }) : null,
    };
  },

  /**
   * Adds `delta` to the assignment counter of each role of `roleIds` in `tx`; each update requires the role to
   * exist (`notFound(roleId)` otherwise).
   */
  countAssignments(
    tx: Transaction,
    teamId: string,
    roleIds: Iterable<string>,
    delta: 1 | -1,
    notFound: (roleId: string) => ProblemError,
  ): void {
    for (const roleId of roleIds) {
      tx.update(keys.role(teamId, roleId), {
        expression: 'ADD assignment_count :delta',
        condition: ITEM_EXISTS_CONDITION.expression,
        values: { ':delta': delta },
        onConditionFailed: () => notFound(roleId),
      });
    }
  },

  /**
   * Adds to `tx` a new role and its name claim (`normalizedName`), each only if absent; a taken name is `nameTaken()`.
   */
  create(
    tx: Transaction,
    teamId: string,
    role: StoredRoleFields,
    normalizedName: string,
    nameTaken: () => ProblemError,
  ): void {
    tx.put(
      { ...keys.role(teamId, role.id), entity: entity.role, team_id: teamId, ...role },
      {
        condition: ITEM_ABSENT_CONDITION.expression,
      },
    );
    roleStore.claimName(tx, teamId, role.id, normalizedName, nameTaken);
  },

  /** Adds to `tx` the claim of `normalizedName` for role `roleId`, only if free (else `nameTaken()`). */
  claimName(
    tx: Transaction,
    teamId: string,
    roleId: string,
    normalizedName: string,
    nameTaken: () => ProblemError,
  ): void {
    tx.put(
      { ...keys.roleName(teamId, normalizedName), entity: entity.roleName, role_id: roleId },
      { condition: ITEM_ABSENT_CONDITION.expression, onConditionFailed: nameTaken },
    );
  },

  /** Adds to `tx` the release of the name claim `normalizedName`. */
  releaseName(tx: Transaction, teamId: string, normalizedName: string): void {
    tx.delete(keys.roleName(teamId, normalizedName));
  },

  /**
   * Adds to `tx` a role's changed fields (`name`, `description`, `abilities`, `project_ids`, `updated_at`,
   * `version` of `next`), conditional on the version of `read` (else `changed()`).
   */
  writeChange(
    tx: Transaction,
    teamId: string,
    read: StoredRoleFields,
    next: StoredRoleFields,
    changed: () => ProblemError,
  ): void {
    const set = setFields({
      name: next.name,
      description: next.description,
      abilities: next.abilities,
      project_ids: next.project_ids,
      updated_at: next.updated_at,
      version: next.version,
    });
    const guard = allOf(atVersion(read.version));
    tx.update(keys.role(teamId, read.id), {
      expression: `SET ${set.clause}`,
      condition: guard.expression,
      names: set.names,
      values: { ...set.values, ...guard.values },
      onConditionFailed: changed,
    });
  },

  /**
   * Adds to `tx` the deletion of the role as read with its name claim, conditional on its version and on no
   * assignment (else `assignedOrChanged()`).
   */
  delete(
    tx: Transaction,
    teamId: string,
    read: StoredRoleFields,
    normalizedName: string,
    assignedOrChanged: () => ProblemError,
  ): void {
    const guard = allOf(atVersion(read.version), {
      expression: '(attribute_not_exists(assignment_count) OR assignment_count = :zero)',
      values: { ':zero': 0 },
    });
    tx.delete(keys.role(teamId, read.id), {
      condition: guard.expression,
      values: guard.values,
      onConditionFailed: assignedOrChanged,
    });
    roleStore.releaseName(tx, teamId, normalizedName);
  },
};
