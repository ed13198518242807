import type { Item } from './requests.js';

/**
 * Expression fragments the per-object store adapters share (DESIGN D14, D35): existence conditions, the
 * optimistic revision check and bump, and a deadline's due-time guard. Only adapters under `shared/store/`
 * use them; the domain calls the adapters in its own terms.
 */

/** Condition: the item exists. */
export const ITEM_EXISTS = 'attribute_exists(pk)';

/** Condition: no item is stored under the key (a put that creates). */
export const ITEM_ABSENT = 'attribute_not_exists(pk)';

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

/** The SET clause raising `revision` to `:next_revision` (bound by {@link existsAtRevision} or {@link existsAsRead}). */
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
