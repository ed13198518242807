import { randomUUID } from 'node:crypto';
import type { Principal } from '../auth/principal.js';
import type { ActivitySurface } from '../domain/activity/schema.js';
import { failureOf, ProblemError, fieldErrors, type ProblemDocument } from '../errors.js';
import { parseIdempotencyKey } from '../limits/idempotency.js';
import { isWrite } from '../operations/definition.js';
import type { AnyHandler } from '../operations/handler.js';
import { invokeOperation } from '../operations/invoke.js';
import {
  inputSchemaOf,
  pipelineOperationById,
  type InternalOperationId,
  type OperationId,
} from '../operations/registry.js';
import type { Runtime } from '../runtime.js';

/** A page of a list operation (DESIGN D12). */
export interface ListPage<T> {
  data: T[];
  next_cursor: string | null;
}

/** What a dashboard action got: the operation's result (maybe replayed), or its problem document. */
export type OperationOutcome<T = unknown> =
  { ok: true; result: T; replayed: boolean } | { ok: false; problem: ProblemDocument; cause?: unknown };

/** Where field errors point, and what the problem says: an HTML surface's form, the operator CLI's options. */
const INVALID_INPUT = {
  form: { path: 'form', detail: 'The form is not valid.' },
  options: { path: 'options', detail: 'The options are not valid.' },
};

/**
 * Runs a registry or internal operation for an HTML surface (D13, D21, D35) or the operator CLI via
 * `invokeOperation`, as a team member, a portal subscriber, the operator, or nobody for a public one: field errors
 * under `form.` (the CLI's under `options.`), `idempotencyKey` makes a double submit replay. `handler` is the
 * operation's handler, given by the surface (each carries only the handlers it runs) or a dashboard variant (D8
 * rotation); `surface: 'portal'` for public pages (D26, D27), `'operator'` for the CLI; `clientIp` for per-IP limits
 * (D4). Never throws.
 */
export async function runOperation<T = unknown>(
  runtime: Runtime,
  principal: Principal | null,
  operationId: OperationId | InternalOperationId,
  input: Record<string, unknown>,
  options: {
    requestId: string;
    idempotencyKey?: string;
    handler: AnyHandler;
    surface?: Extract<ActivitySurface, 'dashboard' | 'portal' | 'operator'>;
    clientIp?: string;
  },
): Promise<OperationOutcome<T>> {
  const operation = pipelineOperationById(operationId);
  const surface = options.surface ?? 'dashboard';
  const fields = surface === 'operator' ? INVALID_INPUT.options : INVALID_INPUT.form;
  const outcome = await invokeOperation({
    runtime,
    principal,
    operation,
    handler: options.handler,
    surface,
    requestId: options.requestId,
    clientIp: options.clientIp,
    decode: () => {
      const parsed = inputSchemaOf(operation, { withIdempotencyKey: false }).safeParse(input);
      if (!parsed.success)
        throw new ProblemError('VALIDATION_FAILED', fields.detail, {
          errors: fieldErrors(fields.path, parsed.error.issues),
        });
      const args = parsed.data;
      return {
        input: args,
        idempotencyKey: isWrite(operation)
          ? parseIdempotencyKey(options.idempotencyKey, `${fields.path}.idempotency_key`)
          : null,
        fingerprint: [principal?.tokenId ?? '', surface, operation.id, JSON.stringify(args)],
        cursorField: `${fields.path}.cursor`,
      };
    },
  });
  return outcome.ok
    ? { ok: true, result: outcome.result as T, replayed: outcome.replayed }
    : { ok: false, problem: outcome.problem, cause: outcome.cause };
}

/**
 * Runs `operationId` as the operator (`principal` from `operatorPrincipal`, or null for a team to be created) through
 * the pipeline with surface `operator` (DESIGN §5, D35): the team's activity log gets the entry. Resolves the result;
 * throws the problem as a ProblemError, or the unexpected error behind it.
 */
export async function runAsOperator<T>(
  runtime: Runtime,
  principal: Principal | null,
  operationId: OperationId | InternalOperationId,
  input: Record<string, unknown>,
  handler: AnyHandler,
): Promise<T> {
  const outcome = await runOperation<T>(runtime, principal, operationId, input, {
    requestId: randomUUID(),
    handler,
    surface: 'operator',
  });
  if (outcome.ok) return outcome.result;
  throw failureOf(outcome);
}
