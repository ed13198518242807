import * as z from '../schemas/zod.js';
import { MODULES } from '../domain/modules.js';
import { IdempotencyKeyArgument } from '../schemas/common.js';
import { matchPath } from '../http/route-match.js';
import {
  isWrite,
  type AnyInternalOperation,
  type AnyOperation,
  type HttpMethod,
  type PipelineOperation,
  type ToolBinding,
} from './definition.js';

/**
 * The operation registry (DESIGN D13): every operation of every object module, with the REST route
 * table generated from them. Metadata only (no handlers), so `lib/` imports it to build one route and
 * one Lambda per operation.
 */

type OperationsOf<M> = M extends { operations: infer O } ? O[keyof O] : never;
type IdOf<T> = T extends { id: infer I extends string } ? I : never;

/** Every operation id, e.g. `'createProject'`. */
export type OperationId = IdOf<OperationsOf<(typeof MODULES)[number]>>;

type InternalOf<M> = M extends { internal: infer O } ? O[keyof O] : never;

/** Every internal operation id (DESIGN D35: no route, no tool), e.g. `'signOutOfPortal'`. */
export type InternalOperationId = IdOf<InternalOf<(typeof MODULES)[number]>>;

/** An operation with the folder of the module that holds it (whose `handlers.ts` exports a handler named by its id). */
export type RegisteredOperation = AnyOperation & { readonly module: string };

/** Every operation, in module order. */
export const OPERATIONS: readonly RegisteredOperation[] = MODULES.flatMap((module) =>
  Object.values(module.operations).map((operation) => ({ ...(operation as AnyOperation), module: module.folder })),
);

const BY_ID = new Map(OPERATIONS.map((operation) => [operation.id, operation]));

/** The operation with this id; throws for an unknown id (a programming error). */
export function operationById(id: string): RegisteredOperation {
  const operation = BY_ID.get(id);
  if (!operation) throw new Error(`Unknown operation ${id}`);
  return operation;
}

/**
 * Every internal operation (DESIGN D35), in module order: run by `invokeOperation` like any other, never in the
 * routes, the tools, `openapi.json`, CDK or {@link OPERATIONS}.
 */
const INTERNAL_OPERATIONS: readonly (AnyInternalOperation & { readonly module: string })[] = MODULES.flatMap(
  (module: { folder: string; internal?: Readonly<Record<string, AnyInternalOperation>> }) =>
    Object.values(module.internal ?? {}).map((operation) => ({ ...operation, module: module.folder })),
);

const INTERNAL_BY_ID = new Map(INTERNAL_OPERATIONS.map((operation) => [operation.id, operation]));

/** The routed or internal operation with this id; throws for an unknown id (a programming error). */
export function pipelineOperationById(id: OperationId | InternalOperationId): PipelineOperation {
  return INTERNAL_BY_ID.get(id) ?? operationById(id);
}

/** `GET /v1/projects/{project_id}`: the API Gateway HTTP API route key of an operation. */
export function routeKey(operation: Pick<AnyOperation, 'rest'>): string {
  return `${operation.rest.method} ${operation.rest.path}`;
}

/**
 * The input schema of an operation as one strict object: path parameters, query and body fields
 * together (DESIGN D13: a tool's input is the REST body and path parameters as one object), plus
 * `idempotency_key` on writes when `withIdempotencyKey` is set (tool arguments, DESIGN D3).
 */
export function inputSchemaOf(operation: PipelineOperation, options: { withIdempotencyKey: boolean }): z.ZodMiniObject {
  const shape = {
    ...(operation.params?.shape ?? {}),
    ...(operation.query?.shape ?? {}),
    ...(operation.body?.shape ?? {}),
    ...(options.withIdempotencyKey && isWrite(operation) ? { idempotency_key: IdempotencyKeyArgument } : {}),
  };
  return z.strictObject(shape);
}

/** Operations with a tool binding, paired with it. */
export const TOOL_OPERATIONS: readonly (RegisteredOperation & { tool: ToolBinding })[] = OPERATIONS.filter(
  (operation): operation is RegisteredOperation & { tool: ToolBinding } => operation.tool !== undefined,
);

/**
 * Matches a method and concrete path against the REST routes (as API Gateway would; see
 * `shared/http/route-match.ts`). Returns the operation and its path parameters, `{ allowedMethods }` when
 * the path exists under other methods (→ 405), or null (→ 404).
 */
export function matchRoute(
  method: string,
  path: string,
):
  { operation: RegisteredOperation; pathParameters: Record<string, string> } | { allowedMethods: HttpMethod[] } | null {
  const found = matchPath(OPERATIONS, (operation) => operation.rest, method, path);
  if (!found || 'allowedMethods' in found) return found;
  return { operation: found.route, pathParameters: found.pathParameters };
}
