import type { Principal } from '../auth/principal.js';
import type { ActivitySurface } from '../domain/activity/schema.js';
import { failureOf, fieldErrors, ProblemError } from '../errors.js';
import type { PipelineOperation } from '../operations/definition.js';
import type { AnyHandler } from '../operations/handler.js';
import { invokeOperation } from '../operations/invoke.js';
import type { Runtime } from '../runtime.js';
import type { RequestScope } from '../store/request-scope.js';

/** One internal operation a verified hook runs: see {@link runHookOperation}. */
export interface HookOperationCall {
  principal: Principal;
  operation: PipelineOperation;
  handler: AnyHandler;
  /** The operation's input, built by the hook from the verified update (not a caller's request). */
  input: Record<string, unknown>;
  /** The provider's reference of the update, e.g. `stripe:evt_...`: the activity entry's `request_id`. */
  requestId: string;
  /** `hook` for a project's provider or platform (default), `operator` for the operator's billing hook. */
  surface?: Extract<ActivitySurface, 'hook' | 'operator'>;
  /** The receipt's request scope (`applyOnce`): the receipt joins the operation's first transaction. */
  within?: RequestScope;
}

/**
 * Runs an internal operation for a verified inbound hook through the pipeline (DESIGN D22, D35): one activity entry,
 * refusals included; the provider's signature or secret stands for the token. The input is validated against the
 * operation's body as every surface's is (VALIDATION_FAILED, fields under `update.`). Resolves the result; throws the
 * problem as a ProblemError, or the unexpected error behind an INTERNAL_ERROR (the hook answers 5xx: the update comes
 * again).
 */
export async function runHookOperation(runtime: Runtime, call: HookOperationCall): Promise<unknown> {
  const outcome = await invokeOperation({
    runtime,
    principal: call.principal,
    operation: call.operation,
    handler: call.handler,
    surface: call.surface ?? 'hook',
    requestId: call.requestId,
    within: call.within,
    decode: () => {
      // A hook's operation has a body only: its schema is the input's, without the registry's `inputSchemaOf` (which
      // would load every operation's definition into the hook's Lambda).
      const parsed = call.operation.body?.safeParse(call.input);
      if (parsed && !parsed.success)
        throw new ProblemError('VALIDATION_FAILED', 'The update does not fit the operation’s input.', {
          errors: fieldErrors('update', parsed.error.issues),
        });
      const input = parsed?.data ?? call.input;
      return { input, idempotencyKey: null, fingerprint: [], cursorField: 'update.cursor' };
    },
  });
  if (outcome.ok) return outcome.result;
  throw failureOf(outcome);
}
