import type { ProblemError } from '../errors.js';
import type { Group } from '../domain/groups/schema.js';
import { ITEM_ABSENT_CONDITION, atVersion, readByIds, setFields } from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { queryPage, type Page } from './pages.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The group store (DESIGN D14, D19): items of the team's partition (`GROUP#<uuid>`) with a `version` and the
 * member list (`member_count` is not stored: it is the list's length), and a name claim
 * (`GROUP_NAME#<normalized name>`) keeping names unique.
 */

/** A group as the domain holds it: the public fields plus its concurrency version. */
type StoredGroupFields = Group & { version: number };

/**
 * The group store adapter: reads and the list of the team's groups (Store port), and the writes of a group and its
 * name claim, added to a transaction (changes conditional on the version read).
 */
export const groupStore = {
  /** The stored group item (strongly consistent), or undefined. */
  async read(store: Store, teamId: string, groupId: string): Promise<Item | undefined> {
    return store.get(keys.group(teamId, groupId));
  },

  /** The stored items of the groups among `groupIds` (strongly consistent), in no particular order. */
  async readMany(store: Store, teamId: string, groupIds: readonly string[]): Promise<Item[]> {
    return readByIds(store, groupIds, (groupId) => keys.group(teamId, groupId));
  },

  /**
   * One page of the team's groups in id order (D12), optionally only those holding `memberId` or giving `roleId`
   * (filtered by DynamoDB, so a page may be short while `next_cursor` is set). Errors: VALIDATION_FAILED (cursor).
   */
  async listPage<T>(
    store: Store,
    teamId: string,
    query: { limit: number; cursor?: string; memberId?: string; roleId?: string },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    const conditions: string[] = [];
    const values: Record<string, unknown> = {};
    if (query.memberId) {
      conditions.push('contains(member_ids, :member)');
      values[':member'] = query.memberId;
    }
    if (query.roleId) {
      conditions.push('contains(role_ids, :role)');
      values[':role'] = query.roleId;
    }
    return queryPage(store, {
      partition: keys.teamPartition(teamId),
      sortKeyPrefix: sortKeyPrefix.group,
      limit: query.limit,
      cursor: query.cursor,
      map,
      filter: conditions.length ? { expression: conditions.join(' AND '), values } : undefined,
    });
  },

  /**
   * Adds to `tx` a new group (without `member_count`) and its name claim, each only if absent; a taken name is
   * `nameTaken()`.
   */
  create(
    tx: Transaction,
    teamId: string,
    group: StoredGroupFields,
    normalizedName: string,
    nameTaken: () => ProblemError,
  ): void {
    const { member_count: _count, ...stored } = group;
    tx.put(
      { ...keys.group(teamId, group.id), entity: entity.group, team_id: teamId, ...stored },
      {
        condition: ITEM_ABSENT_CONDITION.expression,
      },
    );
    groupStore.claimName(tx, teamId, group.id, normalizedName, nameTaken);
  },

  /** Adds to `tx` the claim of `normalizedName` for group `groupId`, only if free (else `nameTaken()`). */
  claimName(
    tx: Transaction,
    teamId: string,
    groupId: string,
    normalizedName: string,
    nameTaken: () => ProblemError,
  ): void {
    tx.put(
      { ...keys.groupName(teamId, normalizedName), entity: entity.groupName, group_id: groupId },
      { condition: ITEM_ABSENT_CONDITION.expression, onConditionFailed: nameTaken },
    );
  },

  /** Adds to `tx` the release of the name claim `normalizedName`. */
  releaseName(tx: Transaction, teamId: string, normalizedName: string): void {
    tx.delete(keys.groupName(teamId, normalizedName));
  },

  /**
   * Adds to `tx` a group's changed fields (`name`, `description`, `role_ids`, `member_ids`, `updated_at`,
   * `version` of `next`), conditional on the version of `read` (else `changed()`).
   */
  writeChange(
    tx: Transaction,
    teamId: string,
    read: StoredGroupFields,
    next: StoredGroupFields,
    changed: () => ProblemError,
  ): void {
    groupStore.writeFields(tx, teamId, read, changed, {
      name: next.name,
      description: next.description,
      role_ids: next.role_ids,
      member_ids: next.member_ids,
      updated_at: next.updated_at,
      version: next.version,
    });
  },

  /**
   * Adds to `tx` a group's new member list (`member_ids`, `updated_at`, `version` of `next`), conditional on the
   * version read.
   */
  writeMembers(
    tx: Transaction,
    teamId: string,
    read: StoredGroupFields,
    next: StoredGroupFields,
    changed: () => ProblemError,
  ): void {
    groupStore.writeFields(tx, teamId, read, changed, {
      member_ids: next.member_ids,
      updated_at: next.updated_at,
      version: next.version,
    });
  },

  /** Adds to `tx` the update of `fields` of the group as read, conditional on its version (else `changed()`). */
  writeFields(
    tx: Transaction,
    teamId: string,
    read: StoredGroupFields,
    changed: () => ProblemError,
    fields: Record<string, unknown>,
  ): void {
    const set = setFields(fields);
    const guard = atVersion(read.version);
    tx.update(keys.group(teamId, read.id), {
      expression: `SET ${set.clause}`,
      condition: guard.expression,
      names: set.names,
      values: { ...set.values, ...guard.values },
      onConditionFailed: changed,
    });
  },

  /**
   * Adds to `tx` the deletion of the group as read with its name claim, conditional on its version (else `changed()`).
   */
  delete(
    tx: Transaction,
    teamId: string,
    read: StoredGroupFields,
    normalizedName: string,
    changed: () => ProblemError,
  ): void {
    const guard = atVersion(read.version);
    tx.delete(keys.group(teamId, read.id), {
      condition: guard.expression,
      values: guard.values,
      onConditionFailed: changed,
    });
    groupStore.releaseName(tx, teamId, normalizedName);
  },
};
