import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import { failureOf } from '../errors.js';
import { handlerOf } from '../domain/handlers.js';
import type { InternalOperationId, OperationId } from '../operations/registry.js';
import type { Runtime } from '../runtime.js';
import { runOperation } from '../web/run-operation.js';

/** Runs one operation on the demo team's data: resolves its result, throws an error naming it and its problem. */
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
  return async <T>(operationId: OperationId | InternalOperationId, input: Record<string, unknown>): Promise<T> => {
    const outcome = await runOperation<T>(runtime, principal, operationId, input, {
      requestId: randomUUID(),
      handler: handlerOf(operationId),
      surface: 'operator',
    });
    if (outcome.ok) return outcome.result;
    const { code, detail, errors } = outcome.problem;
    throw new Error(`The demo seed's ${operationId} failed: ${code} ${detail} ${JSON.stringify(errors ?? [])}`, {
      cause: failureOf(outcome),
    });
  };
}
