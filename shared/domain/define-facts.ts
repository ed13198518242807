import type * as z from '../schemas/zod.js';
import type { Ability } from '../catalogues/abilities.js';
import type { WebhookEventDefinition } from '../catalogues/webhook-events.js';
import type { BuiltInRoleName } from './roles/built-in.js';

/**
 * What an object module declares beside its operations (DESIGN §2, D13–D14), in its folder: its abilities
 * and its items' key shapes in `facts.ts` (metadata only: no schemas, so every bundle may import it), its
 * webhook events in `webhook-events.ts` (with their payload schemas). The catalogues and the store's key
 * maps are assembled from the lists beside this file (`facts.ts`, `webhook-events.ts`).
 */

/** One ability of the catalogue (interface "Bearer tokens"). */
export interface AbilityFact {
  /** `<object>:<verb>`, e.g. `project:view-any`. */
  readonly value: string;
  readonly description: string;
  /** The built-in roles (DESIGN D19) that hold it besides `owner` and `admin`, which hold every ability. */
  readonly roles: readonly Exclude<BuiltInRoleName, 'owner' | 'admin'>[];
  /** Held by `owner` alone: not even `admin` holds it. */
  readonly ownerOnly?: true;
}

/** A module's abilities: one category (`category` of the `service://enums/ability` items), in catalogue order. */
export interface AbilityGroup {
  readonly category: string;
  /** The category's heading in the dashboard's role form; given by the first module of the category. */
  readonly label?: string;
  readonly entries: readonly AbilityFact[];
}

/** An object module's abilities and item keys. */
interface ModuleFacts {
  readonly abilities?: AbilityGroup;
  /** Its key shapes (`keys.<name>`): `{ pk, sk }` or a partition key from ids, or a fixed index partition. */
  readonly keys?: Readonly<Record<string, unknown>>;
  /** Sort-key prefixes of its `begins_with` list queries (`sortKeyPrefix.<name>`). */
  readonly sortKeyPrefix?: Readonly<Record<string, unknown>>;
  /** The `entity` attribute of each of its item types (`entity.<name>`). */
  readonly entity?: Readonly<Record<string, string>>;
}

/** Declares an object module's facts (identity at run time; keeps literal types). */
export function defineFacts<const F extends ModuleFacts>(facts: F): F {
  return facts;
}

/** The family of an event name: the part before the first dot. */
export type FamilyOf<N extends string> = N extends `${infer F}.${string}` ? F : never;

/**
 * Declares one webhook event: its name, minimum ability, whether it is project-scoped, its `data` schema and what
 * happened.
 */
export function defineEvent<const N extends string>(
  name: N,
  minimum_ability: Ability,
  project_scoped: boolean,
  data_schema: z.ZodMiniObject,
  description: string,
): WebhookEventDefinition<N> {
  const family = name.slice(0, name.indexOf('.')) as FamilyOf<N>;
  return { name, family, description, minimum_ability, project_scoped, data_schema };
}

type FieldOf<F, K extends string> = F extends { readonly [P in K]: infer V } ? V : never;
type Intersection<U> = (U extends unknown ? (value: U) => void : never) extends (value: infer I) => void ? I : never;

/** One field of every module's facts, as one object. */
type MergedFacts<L extends readonly ModuleFacts[], K extends keyof ModuleFacts> = Intersection<FieldOf<L[number], K>>;

/**
 * Merges one field of every module's facts, in list order, onto `base` (the keys of no object); throws
 * on a name declared twice.
 */
export function mergeFacts<
  const L extends readonly ModuleFacts[],
  K extends 'keys' | 'sortKeyPrefix' | 'entity',
  const B extends object = Record<never, never>,
>(list: L, field: K, base?: B): B & MergedFacts<L, K> {
  const merged: Record<string, unknown> = { ...base };
  for (const facts of list) {
    for (const [name, value] of Object.entries(facts[field] ?? {})) {
      if (name in merged) throw new Error(`${field}.${name} is declared twice`);
      merged[name] = value;
    }
  }
  return merged as B & MergedFacts<L, K>;
}
