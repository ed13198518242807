import type { Principal } from '../auth/principal.js';
import type { Runtime } from '../runtime.js';
import type { AnyOperation, OperationInput, OperationModule, OperationOutput } from './definition.js';

/** What every handler receives beside its input: the runtime (ports), the caller and the request id. */
interface OperationContext {
  runtime: Runtime;
  /** The authenticated caller (a token today; a team member in the dashboard). */
  principal: Principal;
  requestId: string;
  /** The write's `Idempotency-Key` (a UUID) when the caller sent one, else null: what provider idempotency keys derive from. */
  idempotencyKey?: string | null;
}

/** The context of a public operation (`ability: null`): no caller. */
interface PublicOperationContext {
  runtime: Runtime;
  principal: null;
  requestId: string;
}

/**
 * The implementation of one operation (DESIGN D13): takes the validated input (path parameters, query
 * and body as one object, typed from the definition's zod schemas) and returns the success body. REST
 * and MCP call the same handler. Failures are thrown as `ProblemError`s.
 */
export type OperationHandler<Op> = (
  input: OperationInput<Op>,
  context: Op extends { ability: null } ? PublicOperationContext : OperationContext,
) => Promise<OperationOutput<Op>>;

/**
 * Every handler of a module, by operation id: a module's `handlers.ts` declares its object with
 * `satisfies HandlersOf<typeof module>`, so an operation without a handler (or a handler of no
 * operation) does not compile.
 */
export type HandlersOf<M extends OperationModule> = {
  [K in keyof M['operations']]: OperationHandler<M['operations'][K]>;
};

/** A handler of any operation, as `invokeOperation` holds it. */
export type AnyHandler = (
  input: Record<string, unknown>,
  context: OperationContext | PublicOperationContext,
) => Promise<unknown>;

/** Erases a handler's input type for `invokeOperation` (the input was validated by the definition's schemas). */
export function anyHandler<Op extends AnyOperation>(handler: OperationHandler<Op>): AnyHandler {
  return handler as unknown as AnyHandler;
}
