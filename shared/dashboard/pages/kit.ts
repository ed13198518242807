import type { OperationHandlers } from '../../domain/handlers.js';
import type { AnyHandler } from '../../operations/handler.js';
import type { InternalOperationId, OperationId } from '../../operations/registry.js';
import type { DashboardRequest, SignedInRequest } from '../http.js';
import { runOperation, type ListPage, type OperationOutcome } from '../../web/run-operation.js';

export type { ListPage } from '../../web/run-operation.js';

/**
 * The operations one page module runs, each with its handler imported alone (`{ listTokens, createToken }`), so a
 * dashboard function carries only its pages' handlers (D23) and a page cannot name an operation it did not import.
 */
type PageHandlers = Partial<OperationHandlers>;

/**
 * The page's runners of `handlers` through the pipeline (`runOperation`, D35): `read` and `write` as the signed-in
 * member, `collect` and `listOrEmpty` over list pages, `runPublic` for a public operation (no member). Never throw.
 */
export function pageOperations<H extends PageHandlers>(handlers: H) {
  type Id = keyof H & (OperationId | InternalOperationId);
  type ListId = Id & ('listRoles' | 'listGroups' | 'listTeamMembers' | 'listProjects');
  const handlerOf = (operationId: Id): AnyHandler => handlers[operationId] as unknown as AnyHandler;

  /** Runs a read operation for the signed-in member. */
  function read<T>(
    request: SignedInRequest,
    operationId: Id,
    input: Record<string, unknown> = {},
  ): Promise<OperationOutcome<T>> {
    return runOperation<T>(request.runtime, request.viewer.principal, operationId, input, {
      requestId: request.requestId,
      handler: handlerOf(operationId),
    });
  }

  /**
   * Runs a write operation for the signed-in member with the form's idempotency key (a double submit runs once);
   * `handler` replaces the operation's own (a dashboard variant, D8 rotation).
   */
  function write<T>(
    request: SignedInRequest,
    operationId: Id,
    input: Record<string, unknown>,
    handler?: AnyHandler,
  ): Promise<OperationOutcome<T>> {
    return runOperation<T>(request.runtime, request.viewer.principal, operationId, input, {
      requestId: request.requestId,
      idempotencyKey: request.form.get('idempotency_key') ?? undefined,
      handler: handler ?? handlerOf(operationId),
    });
  }

  /**
   * Runs a public operation (no caller) counted in the request's per-IP bucket (D4); `handler` replaces the
   * operation's own (the dashboard's variant that also starts a session).
   */
  function runPublic<T>(
    request: DashboardRequest,
    operationId: Id,
    input: Record<string, unknown>,
    handler?: AnyHandler,
  ): Promise<OperationOutcome<T>> {
    return runOperation<T>(request.runtime, null, operationId, input, {
      requestId: request.requestId,
      clientIp: request.ip,
      handler: handler ?? handlerOf(operationId),
    });
  }

  /**
   * Reads a list operation page by page (at most `maxPages` pages of 100) keeping the items `keep` accepts,
   * until `wanted` are found. For filters the operation does not have (a delivery's time range, dead-lettered
   * within the last 24 hours). Returns the items, whether more pages were left unread, or the first problem.
   */
  async function collect<T>(
    request: SignedInRequest,
    operationId: Id,
    input: Record<string, unknown>,
    keep: (item: T) => boolean,
    options: { wanted: number; maxPages: number },
  ): Promise<OperationOutcome<{ items: T[]; truncated: boolean }>> {
    const items: T[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < options.maxPages; page++) {
      const outcome = await read<ListPage<T>>(request, operationId, {
        ...input,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      if (!outcome.ok) return outcome;
      for (const item of outcome.result.data) {
        if (keep(item)) items.push(item);
        if (items.length >= options.wanted) return { ok: true, result: { items, truncated: true }, replayed: false };
      }
      cursor = outcome.result.next_cursor ?? undefined;
      if (!cursor) return { ok: true, result: { items, truncated: false }, replayed: false };
    }
    return { ok: true, result: { items, truncated: cursor !== undefined }, replayed: false };
  }

  /** A page's list, or an empty list when the member may not read it. */
  async function listOrEmpty<T>(
    request: SignedInRequest,
    operationId: ListId,
    input: Record<string, unknown> = {},
  ): Promise<T[]> {
    const outcome = await read<ListPage<T>>(request, operationId, { limit: 100, ...input });
    return outcome.ok ? outcome.result.data : [];
  }

  return { read, write, runPublic, collect, listOrEmpty };
}
