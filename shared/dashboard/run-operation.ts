import { authorizeOperation } from '../auth/authorize.js';
import { actorOf, type Principal } from '../auth/principal.js';
import { activityItem, recordActivity } from '../domain/activity/repository.js';
import { handlerOf } from '../domain/handlers.js';
import { ProblemError, cursorRejection, fieldErrors, toProblem, type ProblemDocument } from '../errors.js';
import { beginIdempotentRequest, parseIdempotencyKey, requestFingerprint, type IdempotencyClaim } from '../limits/idempotency.js';
import { logger } from '../logger.js';
import { inputSchemaOf, isWrite, operationById, type OperationId } from '../operations/registry.js';
import type { AnyHandler } from '../operations/handler.js';
import type { Runtime } from '../runtime.js';
import { putItem, withRequestScope, type RequestItem, type RequestScope } from '../store/request-scope.js';

/** What a dashboard action got: the operation's result (maybe replayed), or its problem document. */
export type OperationOutcome<T = unknown> = { ok: true; result: T; replayed: boolean } | { ok: false; problem: ProblemDocument };

/**
 * Runs one operation of the registry for the dashboard (DESIGN D13, D21) with a team member as
 * principal, exactly as REST and MCP run it: the operation's ability and team-wide rule
 * (`authorizeOperation`, TOKEN_MISSING_ABILITY), its input schema (path, query and body fields as one
 * object; VALIDATION_FAILED with field errors under `form.`), the `Idempotency-Key` rules for writes
 * (`idempotencyKey`: a UUID the form carries, so a double-clicked submit runs once and the second gets
 * the stored result, `replayed: true`), the same handler, and for every write an activity entry naming
 * the member (surface `dashboard`), committed in the write's own transaction when it has one.
 * `handler` replaces the registry's handler by a dashboard variant of the same operation (the 24-hour
 * dual-signing rotation of DESIGN D8); the definition's rules still apply.
 * Never throws: failures come back as problem documents.
 */
export async function runOperation<T = unknown>(
  runtime: Runtime,
  principal: Principal,
  operationId: OperationId,
  input: Record<string, unknown>,
  options: { requestId: string; idempotencyKey?: string; handler?: AnyHandler },
): Promise<OperationOutcome<T>> {
  const started = performance.now();
  const operation = operationById(operationId);
  const write = isWrite(operation);
  let claim: IdempotencyClaim | null = null;
  let activityCommitted = false;
  let outcome: OperationOutcome<T>;
  const entry = (result: string, status: number) => ({
    ...actorOf(principal),
    surface: 'dashboard' as const,
    operation: operation.id,
    outcome: result,
    status,
    duration_ms: Math.round(performance.now() - started),
    request_id: options.requestId,
  });
  try {
    if (operation.ability) authorizeOperation(principal, { ability: operation.ability, teamWide: operation.teamWide });
    const parsed = inputSchemaOf(operation, { withIdempotencyKey: false }).safeParse(input);
    if (!parsed.success) throw new ProblemError('VALIDATION_FAILED', 'The form is not valid.', { errors: fieldErrors('form', parsed.error.issues) });
    const args = parsed.data as Record<string, unknown>;
    const key = write ? parseIdempotencyKey(options.idempotencyKey, 'form.idempotency_key') : null;
    if (key) {
      claim = await beginIdempotentRequest(runtime.store, runtime.clock, principal.teamId, key, requestFingerprint([principal.tokenId, 'dashboard', operation.id, JSON.stringify(args)]));
      if (claim.kind === 'replay') {
        const stored = claim.response;
        claim = null;
        outcome = { ok: true, result: JSON.parse(stored.body) as T, replayed: true };
        return outcome;
      }
    }
    const stored = (result: unknown) => ({ status: operation.rest.successStatus, headers: {}, body: JSON.stringify(result) });
    const scope: RequestScope | null = write
      ? {
          itemsForEffect: (result) => {
            const items: RequestItem[] = [];
            if (claim?.kind === 'claimed') items.push(claim.completionInTransaction(stored(result)));
            items.push(putItem(activityItem(runtime.clock, principal.teamId, entry('ok', operation.rest.successStatus)).item));
            return items;
          },
        }
      : null;
    const handler = options.handler ?? handlerOf(operationId);
    let result: unknown;
    try {
      const run = () => handler(args, { runtime, principal, requestId: options.requestId });
      result = await (scope ? withRequestScope(scope, run) : run());
    } catch (error) {
      activityCommitted = scope?.committedWith !== undefined;
      throw (args.cursor !== undefined && cursorRejection(error, 'form.cursor')) || error;
    }
    activityCommitted = scope?.committedWith !== undefined;
    if (claim?.kind === 'claimed') {
      const completed = claim;
      claim = null; // the operation took effect: its key is completed, never released
      await completed.complete(stored(result)).catch((error) => logger.error('idempotency record not completed', { request_id: options.requestId, error: error as Error }));
    }
    outcome = { ok: true, result: result as T, replayed: false };
    return outcome;
  } catch (error) {
    // The dashboard claims every key up front ('claim' mode): this releases it and rethrows `error`.
    if (claim?.kind === 'claimed') await claim.settleFailure(error).catch(() => undefined);
    if (!(error instanceof ProblemError)) logger.error('unexpected error', { request_id: options.requestId, operation: operationId, error: error as Error });
    outcome = { ok: false, problem: toProblem(error, options.requestId).problem };
    return outcome;
  } finally {
    if (write && !(activityCommitted && outcome!.ok)) {
      const failed = outcome! && !outcome.ok ? outcome.problem : null;
      await recordActivity(runtime.store, runtime.clock, principal.teamId, entry(failed ? failed.code : 'ok', failed ? failed.status : operation.rest.successStatus)).catch((error) =>
        logger.error('activity write failed', { request_id: options.requestId, error: error as Error }),
      );
    }
  }
}
