import { authorizeOperation } from '../auth/authorize.js';
import { actorOf, type Principal } from '../auth/principal.js';
import { activityItem, recordActivity } from '../domain/activity/repository.js';
import type { ActivitySurface, NewActivityEntry } from '../domain/activity/schema.js';
import { lockdownGuard } from '../domain/billing/lockdown.js';
import { ProblemError, cursorRejection, toProblem, type ProblemDocument } from '../errors.js';
import {
  beginIdempotentRequest,
  requestFingerprint,
  type IdempotencyClaim,
  type StoredResponse,
} from '../limits/idempotency.js';
import { consumeRateLimit, type RateLimitState } from '../limits/rate-limit.js';
import { logger } from '../logger.js';
import type { Runtime } from '../runtime.js';
import { isTransactionConflict } from '../store/optimistic.js';
import {
  guardedStore,
  putItem,
  withRequestScope,
  type RequestItem,
  type RequestScope,
} from '../store/request-scope.js';
import { isWrite, successStatusOf, type PipelineOperation } from './definition.js';
import type { AnyHandler, IdentifiedActor } from './handler.js';

/**
 * What a surface decoded from its request, after authorization: the operation's validated input (path,
 * query and body fields as one object), the `Idempotency-Key` of a write (a UUID, or null), the parts of
 * the request that fingerprint it (DESIGN D3), and where a rejected `cursor` came from (`query.cursor`).
 */
interface DecodedInput {
  input: Record<string, unknown>;
  idempotencyKey: string | null;
  fingerprint: readonly string[];
  cursorField: string;
}

/** One call of an operation from a surface (REST, MCP, dashboard, portal): see {@link invokeOperation}. */
export interface Invocation {
  runtime: Runtime;
  /** The caller; null only for a public operation (`ability: null`). */
  principal: Principal | null;
  /** A routed operation or an internal one (DESIGN D35). */
  operation: PipelineOperation;
  /** The operation's handler (the surface imports it, so a route bundle holds only its own). */
  handler: AnyHandler;
  surface: ActivitySurface;
  requestId: string;
  /** `performance.now()` when the request arrived (durations are measured from it); default: now. */
  startedAt?: number;
  /** The caller's IP address: the subject of the operation's `perIpLimit` (DESIGN D4), on every surface. */
  clientIp?: string;
  /**
   * Surface checks that may refuse (a rate limit, a read-only mode; throw a ProblemError): before a write, beside a
   * read.
   */
  admit?: () => Promise<void> | void;
  /** Validates the request into the operation's input (throws VALIDATION_FAILED and the like). */
  decode: () => DecodedInput;
  /** The activity entry's `operation` (default the operation id; MCP logs the tool name). */
  activityName?: string;
  /** The activity entry's `status` on success (default the operation's REST success status). */
  successStatus?: number;
  /** Also log reads (MCP logs every tool call, DESIGN D5); writes are always logged. */
  logReads?: boolean;
  /**
   * The caller's own request scope (a hook's receipt, DESIGN D22): its items join the write's first transaction, and
   * it is marked committed with it.
   */
  within?: RequestScope;
}

/**
 * The outcome of {@link invokeOperation}: the result (maybe a replay of the stored one) or a problem; `rate` is the
 * state of the operation's per-IP bucket when it has one (the surface's `X-RateLimit-*` headers).
 */
export type InvocationOutcome = (
  | { ok: true; result: unknown; replayed: boolean }
  | {
      ok: false;
      problem: ProblemDocument;
      headers: Record<string, string>;
      /**
       * The unexpected error behind an INTERNAL_ERROR, never shown to a caller: the operator CLI names an unreachable
       * store with it, the billing hook rethrows it (so the provider sends the event again).
       */
      cause?: unknown;
    }
) & { rate?: RateLimitState };

/** The stored response of a result (DESIGN D3): the success status and the result's JSON, the same on every surface. */
function storedResponse(operation: PipelineOperation, result: unknown): StoredResponse {
  return {
    status: successStatusOf(operation),
    headers: { 'Content-Type': 'application/json; charset=utf-8' },
    body: JSON.stringify(result),
  };
}

function replayOf(stored: StoredResponse): InvocationOutcome {
  return { ok: true, result: JSON.parse(stored.body) as unknown, replayed: true };
}

/**
 * True when a write runs without the billing lockdown guard (DESIGN D20): the operation is `lockdown: 'exempt'`, the
 * caller is a subscriber in the portal (the subscriber side keeps running on a locked team), or it is the operator.
 */
function lockdownExempt(operation: PipelineOperation, principal: Principal): boolean {
  return operation.lockdown === 'exempt' || Boolean(principal.subscriberId) || Boolean(principal.operator);
}

/**
 * Runs one operation for any surface (D1–D5, D13, D20, D35): per-IP limit → admit → ability and scope
 * (TOKEN_MISSING_ABILITY) → decode → idempotency → handler; writes also store completion and activity and check
 * BILLING_LOCKED unless exempt. A read does not wait for the limits: it runs beside them, and their refusal is the
 * answer; a write's idempotency claim is written beside them (released on a refusal), its handler waits. Every write
 * gets one activity entry (a public one once its handler identified the team). Never throws: problem documents.
 */
export async function invokeOperation(call: Invocation): Promise<InvocationOutcome> {
  const { runtime, principal, operation, requestId } = call;
  const started = call.startedAt ?? performance.now();
  const write = isWrite(operation);
  const durationMs = () => Math.round(performance.now() - started);
  let identified: IdentifiedActor | null = null;
  const actor = () =>
    principal
      ? { teamId: principal.teamId, ...actorOf(principal) }
      : identified && {
          teamId: identified.teamId,
          token_id: identified.tokenId ?? null,
          member_id: identified.memberId ?? null,
        };
  const entry = (outcome: string, status: number): NewActivityEntry => ({
    token_id: actor()!.token_id,
    member_id: actor()!.member_id,
    surface: call.surface,
    operation: call.activityName ?? operation.id,
    outcome,
    status,
    duration_ms: durationMs(),
    request_id: requestId,
  });
  const successStatus = call.successStatus ?? successStatusOf(operation);
  let claim: IdempotencyClaim | null = null;
  /** The claim's completion after a write without its own transaction (or whose answer changed), once sent. */
  let completion: Promise<void> | undefined;
  let scope: RequestScope | null = null;
  let outcome: InvocationOutcome | undefined;
  let rate: RateLimitState | undefined;
  const admit = async () => {
    if (operation.perIpLimit)
      rate = await consumeRateLimit(runtime.store, runtime.clock, operation.perIpLimit, call.clientIp ?? 'unknown');
    await call.admit?.();
  };
  // A read runs beside its admission (the rate limits and the surface's checks, D4): it need not wait for their round
  // trips, and a refusal discards its result and stands as the answer. A write's idempotency claim is written beside it
  // too, and released when it refuses; nothing else of a write runs before it is admitted.
  let pendingAdmission: Promise<void> | null = null;
  const admitted = async () => {
    const admission = pendingAdmission;
    pendingAdmission = null;
    await admission;
  };
  try {
    pendingAdmission = admit();
    pendingAdmission.catch(() => undefined);
    if (principal && operation.ability)
      authorizeOperation(principal, { id: operation.id, ability: operation.ability, teamWide: operation.teamWide });
    const decoded = call.decode();
    if (decoded.idempotencyKey && principal) {
      const mode = operation.idempotency ?? 'claim';
      // 'in-transaction' writes nothing here, and its settling reads the record: a refused call must never reach it.
      if (mode === 'in-transaction') await admitted();
      claim = await beginIdempotentRequest(
        runtime.store,
        runtime.clock,
        principal.teamId,
        decoded.idempotencyKey,
        requestFingerprint(decoded.fingerprint),
        mode,
      );
      await admitted();
      if (claim.kind === 'replay') {
        outcome = { ...replayOf(claim.response), rate };
        claim = null;
        return outcome;
      }
    }
    if (principal && write) {
      scope = {
        guard: lockdownExempt(operation, principal) ? undefined : lockdownGuard(principal.teamId),
        itemsForEffect: (result) => {
          const items: RequestItem[] = [];
          if (claim?.kind === 'claimed') items.push(claim.completionInTransaction(storedResponse(operation, result)));
          items.push(putItem(activityItem(runtime.clock, principal.teamId, entry('ok', successStatus)).item));
          if (call.within) items.push(...call.within.itemsForEffect(result));
          return items;
        },
      };
    }
    if (write) await admitted();
    const handlerRuntime = scope?.guard ? { ...runtime, store: guardedStore(runtime.store) } : runtime;
    const run = () =>
      call.handler(
        decoded.input,
        principal
          ? { runtime: handlerRuntime, principal, requestId, idempotencyKey: decoded.idempotencyKey }
          : {
              runtime: handlerRuntime,
              principal: null,
              requestId,
              idempotencyKey: decoded.idempotencyKey,
              identify: (named: IdentifiedActor) => void (identified = named),
            },
      );
    let result: unknown;
    try {
      result = await (scope ? withRequestScope(scope, run) : run());
    } catch (error) {
      throw (decoded.input.cursor !== undefined && cursorRejection(error, decoded.cursorField)) || error;
    } finally {
      if (call.within && scope?.committedWith) call.within.committedWith = scope.committedWith;
    }
    await admitted();
    if (claim?.kind === 'claimed') {
      const completed = claim;
      claim = null; // the operation took effect: its key is completed, never released
      // Sent beside the activity entry's write (below): the answer waits for both.
      completion = completed
        .complete(storedResponse(operation, result), scope?.committedWith !== undefined)
        .catch((error) =>
          logger.error('idempotency record not completed', {
            request_id: requestId,
            operation: operation.id,
            error: error as Error,
          }),
        );
    }
    outcome = { ok: true, result, replayed: false, rate };
    return outcome;
  } catch (error) {
    // A read's refused admission is the answer, whatever the read did meanwhile.
    let failure = pendingAdmission
      ? ((await pendingAdmission.then(
          () => null,
          (refusal: unknown) => refusal,
        )) ?? error)
      : error;
    if (claim?.kind === 'claimed') {
      // 'claim': the key is released and the error stands; 'in-transaction': the record, read once,
      // decides — a duplicate that lost to the first one replays its response (D3).
      try {
        outcome = { ...replayOf(await claim.settleFailure(error)), rate };
        return outcome;
      } catch (settled) {
        failure = settled;
      }
    }
    if (isTransactionConflict(failure))
      failure = new ProblemError(
        'CONFLICT',
        'Other requests kept changing the same objects at the same moment; read them again and retry.',
      );
    if (!(failure instanceof ProblemError))
      logger.error('unexpected error', { request_id: requestId, operation: operation.id, error: failure as Error });
    const { problem, headers } = toProblem(failure, requestId);
    outcome = { ok: false, problem, headers, rate, ...(failure instanceof ProblemError ? {} : { cause: failure }) };
    return outcome;
  } finally {
    // Written here unless the write's own transaction already holds the entry of this (successful) answer.
    const committed = scope?.committedWith !== undefined && outcome?.ok === true;
    const team = actor()?.teamId;
    let activity: Promise<unknown> | undefined;
    if (team && (write || call.logReads) && !committed) {
      const failed = outcome && !outcome.ok ? outcome.problem : null;
      activity = recordActivity(
        runtime.store,
        runtime.clock,
        team,
        entry(failed ? failed.code : 'ok', failed ? failed.status : successStatus),
      ).catch((error) => logger.error('activity write failed', { request_id: requestId, error: error as Error }));
    }
    await Promise.all([completion, activity]);
  }
}

/** A call a surface refused before it could name an operation (DESIGN D5: an unknown tool, a gate, a rate limit). */
interface RefusedCall {
  teamId: string;
  tokenId: string | null;
  surface: ActivitySurface;
  /** The name the call used (a tool name as the log may store it). */
  operation: string;
  /** The error code and its HTTP status. */
  outcome: string;
  status: number;
  durationMs: number;
  requestId: string;
}

/**
 * Writes the activity entry of a {@link RefusedCall}: the pipeline's module is the one place entries are written
 * (DESIGN D35). Never throws (a failed write is logged); resolves true once written.
 */
export async function recordRefusedCall(runtime: Runtime, refused: RefusedCall): Promise<boolean> {
  return recordActivity(runtime.store, runtime.clock, refused.teamId, {
    token_id: refused.tokenId,
    surface: refused.surface,
    operation: refused.operation,
    outcome: refused.outcome,
    status: refused.status,
    duration_ms: refused.durationMs,
    request_id: refused.requestId,
  }).then(
    () => true,
    (error: unknown) => {
      logger.error('activity write failed', { request_id: refused.requestId, error: error as Error });
      return false;
    },
  );
}
