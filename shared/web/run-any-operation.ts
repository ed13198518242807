import type { Principal } from '../auth/principal.js';
import { handlerOf } from '../domain/handlers.js';
import type { AnyHandler } from '../operations/handler.js';
import type { InternalOperationId, OperationId } from '../operations/registry.js';
import type { Runtime } from '../runtime.js';
import { runOperation, type OperationOutcome } from './run-operation.js';

/**
 * {@link runOperation} for a surface that carries every handler (the dashboard): any routed or internal operation with
 * its own handler, or `options.handler` (a dashboard variant, D8 rotation). Surfaces that run a few operations (the
 * public pages) pass their handlers to `runOperation` and do not import this module. Never throws.
 */
export function runAnyOperation<T = unknown>(
  runtime: Runtime,
  principal: Principal | null,
  operationId: OperationId | InternalOperationId,
  input: Record<string, unknown>,
  options: Omit<Parameters<typeof runOperation>[4], 'handler'> & { handler?: AnyHandler },
): Promise<OperationOutcome<T>> {
  return runOperation<T>(runtime, principal, operationId, input, {
    ...options,
    handler: options.handler ?? handlerOf(operationId),
  });
}
