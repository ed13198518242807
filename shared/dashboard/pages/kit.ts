import type { AnyHandler } from '../../operations/handler.js';
import type { OperationId } from '../../operations/registry.js';
import type { SignedInRequest } from '../http.js';
import type { ListPage, OperationOutcome } from '../../web/run-operation.js';
import { runAnyOperation } from '../../web/run-any-operation.js';

export type { ListPage } from '../../web/run-operation.js';

/** Runs a read operation for the signed-in member (see `runAnyOperation`). */
export function read<T>(
  request: SignedInRequest,
  operationId: OperationId,
  input: Record<string, unknown> = {},
): Promise<OperationOutcome<T>> {
  return runAnyOperation<T>(request.runtime, request.viewer.principal, operationId, input, {
    requestId: request.requestId,
  });
}

/** Runs a write operation for the signed-in member with the form's idempotency key (a double submit runs once). */
export function write<T>(
  request: SignedInRequest,
  operationId: OperationId,
  input: Record<string, unknown>,
  handler?: AnyHandler,
): Promise<OperationOutcome<T>> {
  return runAnyOperation<T>(request.runtime, request.viewer.principal, operationId, input, {
    requestId: request.requestId,
    idempotencyKey: request.form.get('idempotency_key') ?? undefined,
    handler,
  });
}

/**
 * Reads a list operation page by page (at most `maxPages` pages of 100) keeping the items `keep` accepts,
 * until `wanted` are found. For filters the operation does not have (a delivery's time range, dead-lettered
 * within the last 24 hours). Returns the items, whether more pages were left unread, or the first problem.
 */
export async function collect<T>(
  request: SignedInRequest,
  operationId: OperationId,
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
export async function listOrEmpty<T>(
  request: SignedInRequest,
  operationId: 'listRoles' | 'listGroups' | 'listTeamMembers' | 'listProjects',
  input: Record<string, unknown> = {},
): Promise<T[]> {
  const outcome = await read<ListPage<T>>(request, operationId, { limit: 100, ...input });
  return outcome.ok ? outcome.result.data : [];
}
