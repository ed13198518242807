/**
 * The shape of the tenant-isolation cases (`test/integration/tenant-isolation.test.ts`). Each object
 * module has one file beside this one, named after its folder (`test/isolation/<folder>.ts`), whose
 * default export is `defineIsolationCases({...})`: one case per operation of the module, stated once as
 * the operation's INPUT (path parameters, query and body as one object, like a tool's arguments), from
 * which both the REST call and, where the operation has a tool, the tool call are derived. A new
 * operation without a case fails the coverage test.
 */
import type { ErrorCode } from '../../shared/catalogues/error-codes.js';
import type { Runtime } from '../../shared/runtime.js';
import type { World } from '../support/guarantees.js';

/** What a call expects: a code, or success checked by `ok` (body, status — a tool's is 200 — and the world). */
export type Expect = { code: ErrorCode } | { ok: (body: any, status: number, world: World) => void };

/** One walk's case of an operation: its input and what the caller must get. */
export interface WalkCase<Extra> {
  input: (world: World, extra: Extra) => Record<string, unknown>;
  expect: Expect;
}

/**
 * The cases of one operation. `foreign`: team A's full token aimed at team B's objects. `scoped`: team
 * A's token narrowed to `a.project`, aimed at team A's other project; when omitted it is derived — a
 * team-wide operation expects TOKEN_MISSING_ABILITY; any other takes the foreign input with `project_id`
 * replaced by team A's other project and expects what the foreign case expects.
 */
export interface OperationCases<Extra> {
  foreign: WalkCase<Extra>;
  scoped?: WalkCase<Extra>;
}

/** The cases of a module. */
export interface IsolationCases<Extra = Record<string, never>> {
  /**
   * Seeds what the cases need beyond the shared {@link World} (for both teams; it runs before team B's
   * partition is snapshotted) and returns it as `extra`.
   */
  seed?: (runtime: Runtime, world: World) => Promise<Extra>;
  /** Every id, name or secret of team B in `extra`: none may appear in what team A receives. */
  secretsOfB?: (extra: Extra) => string[];
  /** One entry per operation id of the module. */
  operations: Record<string, OperationCases<Extra>>;
}

/** Declares a module's cases (identity; keeps the `extra` type). */
export function defineIsolationCases<Extra = Record<string, never>>(
  cases: IsolationCases<Extra>,
): IsolationCases<Extra> {
  return cases;
}

/** A team-wide operation refused to a project-scoped token. */
export const TEAM_WIDE: Expect = { code: 'TOKEN_MISSING_ABILITY' };
/** The answer for another team's object (or one outside the token's projects). */
export const NOT_FOUND: Expect = { code: 'NOT_FOUND' };
/** Ids of a list body. */
export const idsOf = (body: { data: { id: string }[] }) => body.data.map((item) => item.id);
