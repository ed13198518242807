import { revisionCondition } from './optimistic.js';
import type { Item } from './requests.js';
import { ConditionFailedError, type Store } from './store.js';

/**
 * Expression fragments the per-object store adapters share (DESIGN D14, D35): existence conditions, the optimistic
 * revision guard and bump, a deadline's due-time guard, and `SET` clauses built from a record of fields. Only adapters
 * under `shared/store/` use them; the domain never sees an expression.
 */

/** A condition expression with its placeholders (names `#…`, values `:…`). */
export interface Condition {
  expression: string;
  names?: Record<string, string>;
  values?: Record<string, unknown>;
}

/** Condition: an item exists under the request's key. */
export const ITEM_EXISTS = 'attribute_exists(pk)';

/** Condition: no item has this key yet (a put that must create). */
export const ITEM_ABSENT = 'attribute_not_exists(pk)';

/** {@link ITEM_EXISTS} as a {@link Condition}. */
export const ITEM_EXISTS_CONDITION: Condition = { expression: ITEM_EXISTS };

/** {@link ITEM_ABSENT} as a {@link Condition}. */
export const ITEM_ABSENT_CONDITION: Condition = { expression: ITEM_ABSENT };

/**
 * The `SET` clause that raises an item's `revision` by one, with its values: part of every update that
 * changes what a cached copy of the item may be used for.
 */
export const RAISE_REVISION = {
  clause: 'revision = revision + :revision_one',
  values: { ':revision_one': 1 },
} as const;

/**
 * Resolves true once `write` is made, false when its condition failed ({@link ConditionFailedError}); other errors
 * reject.
 */
export async function conditionally(write: Promise<unknown>): Promise<boolean> {
  try {
    await write;
    return true;
  } catch (error) {
    if (error instanceof ConditionFailedError) return false;
    throw error;
  }
}

/** The conditions ANDed, their placeholders merged (undefined entries are skipped). */
export function allOf(...conditions: readonly (Condition | undefined)[]): Required<Condition> {
  const present = conditions.filter((condition): condition is Condition => condition !== undefined);
  return {
    expression: present.map((condition) => condition.expression).join(' AND '),
    names: Object.assign({}, ...present.map((condition) => condition.names ?? {})) as Record<string, string>,
    values: Object.assign({}, ...present.map((condition) => condition.values ?? {})) as Record<string, unknown>,
  };
}

/** The item exists and its `revision` is still the one of `read` (DESIGN D14 optimistic concurrency). */
export function existsAtRevisionOf(read: Item): Required<Condition> {
  return allOf(ITEM_EXISTS_CONDITION, revisionCondition(read));
}

/**
 * A `SET` clause (without the keyword) assigning each field of `fields` through placeholders `#<field>` and
 * `:<field>`; fields whose value is undefined are left out. Returns the clause and its placeholders.
 */
export function setFields(fields: Record<string, unknown>): {
  clause: string;
  names: Record<string, string>;
  values: Record<string, unknown>;
} {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const parts: string[] = [];
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const placeholder = field.replace(/[^A-Za-z0-9_]/g, '_');
    names[`#${placeholder}`] = field;
    values[`:${placeholder}`] = value;
    parts.push(`#${placeholder} = :${placeholder}`);
  }
  return { clause: parts.join(', '), names, values };
}

/** The `version` of a versioned item is still `version` (roles, groups, team members: DESIGN D19). */
export function atVersion(version: number): Condition {
  return { expression: 'version = :read_version', values: { ':read_version': version } };
}

/**
 * The stored items of `ids` found under `keyOf` (strongly consistent BatchGetItems of 100 keys), in no particular
 * order.
 */
export async function readByIds(store: Store, ids: readonly string[], keyOf: (id: string) => Item): Promise<Item[]> {
  const items: Item[] = [];
  for (let start = 0; start < ids.length; start += 100)
    items.push(...(await store.batchGet(ids.slice(start, start + 100).map(keyOf))));
  return items;
}

/** A condition with the values its placeholders name. */
export interface Guard {
  condition: string;
  values: Record<string, unknown>;
}

/**
 * The item exists and its `revision` is still `revision` (the number read), with `:next_revision` bound to
 * `revision + 1` for {@link REVISION_BUMP}.
 */
export function existsAtRevision(revision: number): Guard {
  return {
    condition: `${ITEM_EXISTS} AND revision = :revision`,
    values: { ':revision': revision, ':next_revision': revision + 1 },
  };
}

/**
 * The SET clause raising `revision` to `:next_revision` (bound by {@link existsAtRevision} or {@link existsAsRead}).
 */
export const REVISION_BUMP = 'revision = :next_revision';

/**
 * The item exists and its `revision` is as in `read` (an item stored without one must still have none),
 * with `:next_revision` bound to the read revision + 1 (0 + 1 for none) for {@link REVISION_BUMP}.
 */
export function existsAsRead(read: Item, revision: number): Guard {
  return read.revision === undefined
    ? { condition: `${ITEM_EXISTS} AND attribute_not_exists(revision)`, values: { ':next_revision': revision + 1 } }
    : {
        condition: `${ITEM_EXISTS} AND revision = :read_revision`,
        values: { ':read_revision': read.revision, ':next_revision': revision + 1 },
      };
}

/** The SET clause raising `revision` by one on an item that may have none yet (binds `:zero`, `:one`). */
export const REVISION_INCREMENT = {
  clause: 'revision = if_not_exists(revision, :zero) + :one',
  values: { ':zero': 0, ':one': 1 },
} as const;

/** Condition: the deadline item exists and is still due at `dueAt` (ISO 8601), i.e. nobody moved or applied it. */
export function dueAtUnchanged(dueAt: string): Guard {
  return { condition: `${ITEM_EXISTS} AND due_at = :due_at`, values: { ':due_at': dueAt } };
}

/**
 * Deletes every item of partition `pk` whose sort key starts with `sortKeyPrefix` ('' for all), outside any
 * transaction: pages of keys, one DeleteItem each. For what a deletion leaves behind after its own transaction
 * committed (too many items for it). Returns how many were deleted; throws on store errors (a retry finishes the job).
 */
export async function deleteItemsUnder(store: Store, pk: string, sortKeyPrefix = ''): Promise<number> {
  let deleted = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await store.query({
      KeyConditionExpression: sortKeyPrefix ? 'pk = :pk AND begins_with(sk, :prefix)' : 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk, ...(sortKeyPrefix ? { ':prefix': sortKeyPrefix } : {}) },
      ProjectionExpression: 'pk, sk',
      ExclusiveStartKey: startKey,
    });
    for (const item of page.items) await store.delete({ Key: { pk: item.pk, sk: item.sk } });
    deleted += page.items.length;
    startKey = page.lastEvaluatedKey;
  } while (startKey);
  return deleted;
}
