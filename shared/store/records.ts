import * as z from '../schemas/zod.js';
import type { Item } from './requests.js';

/**
 * Stored records (DESIGN §2, D14): every item is parsed on read through the zod schema of its STORED
 * shape (attribute names as stored), which lives in its entity's folder and reuses the public schema's
 * field definitions where the stored field is the same. Attributes the schema does not name (`pk`,
 * `sk`, index keys, `entity`, secrets a read must not carry on) are stripped by the object schema.
 */

/**
 * A stored item did not match its record schema: a programming or data error (INTERNAL_ERROR at the
 * edges). The message names the entity, the item's key and the failing attribute paths with zod's issue
 * codes — never a value (items may hold secrets or hashes).
 */
export class StoredRecordError extends Error {
  readonly entity: string;
  readonly key: string;
  constructor(entity: string, key: string, issues: readonly z.core.$ZodIssue[]) {
    const fields = issues.map((issue) => `${issue.path.map(String).join('.') || '(item)'}: ${issue.code}`).join('; ');
    super(`The stored ${entity} ${key} does not match its record schema (${fields}).`);
    this.name = 'StoredRecordError';
    this.entity = entity;
    this.key = key;
  }
}

/**
 * How a parse error names an item: its `pk` and `sk` (the default), or a description of the caller's for keys built
 * from a hash.
 */
export type KeyDescription = (item: Item) => string;

const primaryKeyOf: KeyDescription = (item) => `${String(item.pk)} / ${String(item.sk)}`;

/**
 * Parses one stored item of `entity` with `schema` (the stored record's zod schema) and returns the
 * parsed record, unknown attributes stripped. Throws {@link StoredRecordError} naming the entity and the
 * key (`describeKey`, default `pk / sk`) when the item does not match.
 */
export function parseItem<S extends z.ZodMiniType<object, Item>>(
  entity: string,
  schema: S,
  item: Item,
  describeKey: KeyDescription = primaryKeyOf,
): z.output<S> {
  const parsed = schema.safeParse(item);
  if (!parsed.success) throw new StoredRecordError(entity, describeKey(item), parsed.error.issues);
  return parsed.data;
}

/**
 * {@link parseItem} bound to one entity and schema: `(item) => record`, for `items.map(...)` and repositories' `toX`
 * mappers.
 */
export function recordParser<S extends z.ZodMiniType<object, Item>>(
  entity: string,
  schema: S,
  describeKey?: KeyDescription,
): (item: Item) => z.output<S> {
  return (item) => parseItem(entity, schema, item, describeKey);
}

/** The optimistic-concurrency attribute of any revisioned item (DESIGN D14): absent on an item stored without one. */
const StoredRevision = z.object({ revision: z.optional(z.number().check(z.int(), z.nonnegative())) });

/**
 * The `revision` of a stored item of `entity`: a whole number, 0 for an item stored without one (the
 * `revisionCondition` of such an item is `attribute_not_exists(revision)`). Throws
 * {@link StoredRecordError} naming the entity and the key when it is not a whole number.
 */
export function revisionOf(entity: string, item: Item, describeKey?: KeyDescription): number {
  return parseItem(entity, StoredRevision, item, describeKey).revision ?? 0;
}
