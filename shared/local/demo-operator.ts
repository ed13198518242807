import type { Principal } from '../auth/principal.js';
import { handlerOf } from '../domain/handlers.js';
import type { InternalOperationId, OperationId } from '../operations/registry.js';
import type { Runtime } from '../runtime.js';
import { runAsOperator } from '../web/run-operation.js';

/** Runs one operation on the demo team's data: its result, or an error naming it whose cause is the problem. */
export type DemoOperate = <T>(
  operationId: OperationId | InternalOperationId,
  input: Record<string, unknown>,
) => Promise<T>;

/**
 * The demo seed's way to change state (DESIGN §5, D35): each step is an operation run by the pipeline as the operator
 * (`principal`, from `operatorPrincipal`) with surface `operator`, its input checked by the operation's schema, and an
 * entry in the demo team's activity log dated by `runtime`'s clock.
 */
export function demoOperator(runtime: Runtime, principal: Principal): DemoOperate {
  return <T>(operationId: OperationId | InternalOperationId, input: Record<string, unknown>): Promise<T> =>
    runAsOperator<T>(runtime, principal, operationId, input, handlerOf(operationId)).catch((error: unknown) => {
      throw new Error(`The demo seed's ${operationId} failed: ${(error as Error).message}`, { cause: error });
    });
}
