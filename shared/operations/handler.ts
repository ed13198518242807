import type { Principal } from '../auth/principal.js';
import type { Runtime } from '../runtime.js';
import type { OperationInput, OperationModule, OperationOutput, PipelineOperation } from './definition.js';

/** What every handler receives beside its input: the runtime (ports), the caller and the request id. */
interface OperationContext {
  runtime: Runtime;
  /** The authenticated caller (a token today; a team member in the dashboard). */
  principal: Principal;
  requestId: string;
  /**
   * The write's `Idempotency-Key` (a UUID) when the caller sent one, else null: what provider idempotency keys derive
   * from.
   */
  idempotencyKey?: string | null;
}

/**
 * Who a public operation acted for, once the credential in its input is verified (see {@link
 * PublicOperationContext.identify}).
 */
export interface IdentifiedActor {
  /** The team whose activity log gets the call's entry. */
  teamId: string;
  /** The token the entry names (e.g. the access token an OAuth grant issued), or null. */
  tokenId?: string | null;
  /** The team member the entry names (e.g. the member who accepted an invitation), or null. */
  memberId?: string | null;
}

/** The context of a public operation (`ability: null`): no caller. */
interface PublicOperationContext {
  runtime: Runtime;
  principal: null;
  requestId: string;
  /** The write's `Idempotency-Key` when the surface has one (public writes claim none: keys are per team, D3). */
  idempotencyKey?: string | null;
  /**
   * Names the team and actor once the input's credential (an invitation token, an OAuth code) is verified, so the
   * pipeline writes the call’s activity entry — a later refusal included (DESIGN D35). A later call replaces it.
   */
  identify?: (actor: IdentifiedActor) => void;
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

/** Every handler of a module's internal operations, by id (`satisfies InternalHandlersOf<typeof module>`). */
export type InternalHandlersOf<M extends OperationModule> = {
  [K in keyof NonNullable<M['internal']>]: OperationHandler<NonNullable<M['internal']>[K]>;
};

/** A handler of any operation, as `invokeOperation` holds it. */
export type AnyHandler = (
  input: Record<string, unknown>,
  context: OperationContext | PublicOperationContext,
) => Promise<unknown>;

/** Erases a handler's input type for `invokeOperation` (the input was validated by the definition's schemas). */
export function anyHandler<Op extends PipelineOperation>(handler: OperationHandler<Op>): AnyHandler {
  return handler as unknown as AnyHandler;
}
