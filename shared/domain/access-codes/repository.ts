import type { Principal } from '../../auth/principal.js';
import { canAccessProject, requireProjectAccess } from '../../auth/authorize.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { activeBatchIds, listStoredCodes, readCodeOfActiveBatch, readCodeRef } from '../../store/access-codes/reads.js';
import { revokeCode } from '../../store/access-codes/writes.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import type { Item } from '../../store/requests.js';
import { unitOfWork, type Transaction, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { parseStoredAccessCode, parseStoredAccessCodeStatus, type StoredAccessCode } from './record.js';
import type { AccessCode, AccessCodeStatus } from './schema.js';

/**
 * Access-code reads and revocation (D14, D18) over the store adapter (`shared/store/access-codes/`); generation in
 * generation.ts. Partition `TEAM#<team>#PROJECT#<project>#ACCESS_CODE` holds codes and batches; only `active` batches
 * are visible and redeemable. The code itself is never stored: a lookup item keyed by its normalized SHA-256 (unique
 * per project, case-insensitive) and its suffix. `expires_at` is stored as `code_expires_at` (`expires_at` is the TTL
 * attribute, §3); read status via {@link effectiveStatus}.
 */
/** The query of {@link listAccessCodes}. */
export interface ListAccessCodesInput {
  project_id: string;
  limit: number;
  cursor?: string;
  batch_id?: string;
  plan_id?: string;
  status?: AccessCodeStatus;
}

const notFound = (codeId: string) => new ProblemError('NOT_FOUND', `No access code ${codeId}.`);

/**
 * The status a stored code has at `nowMs` (epoch MILLISECONDS): `revoked` and `exhausted` as stored; an
 * `active` code whose `code_expires_at` has passed is `expired` (before the deadline worker records it).
 */
function statusAt(code: Pick<StoredAccessCode, 'status' | 'code_expires_at'>, nowMs: number): AccessCodeStatus {
  if (code.status !== 'active') return code.status;
  return code.code_expires_at && Date.parse(code.code_expires_at) <= nowMs ? 'expired' : 'active';
}

/** {@link statusAt} of a stored code item (its status and expiry parsed). */
export function effectiveStatus(item: Item, nowMs: number): AccessCodeStatus {
  return statusAt(parseStoredAccessCodeStatus(item), nowMs);
}

/** The public view of a stored code at `nowMs` (epoch MILLISECONDS). */
function publicAccessCode(code: StoredAccessCode, nowMs: number): AccessCode {
  const { code_expires_at: expiresAt, ...fields } = code;
  return {
    ...fields,
    access_days: code.access_days ?? null,
    max_redemptions: code.max_redemptions ?? null,
    times_redeemed: code.times_redeemed ?? 0,
    expires_at: expiresAt ?? null,
    status: statusAt(code, nowMs),
    revoked_at: code.revoked_at ?? null,
  };
}

/** The public view of a stored code item at `nowMs` (epoch MILLISECONDS), parsed through its stored-record schema. */
export function toAccessCode(item: Item, nowMs: number): AccessCode {
  return publicAccessCode(parseStoredAccessCode(item), nowMs);
}

/**
 * Lists a project's codes (DESIGN D12, D18), in key order (grouped by batch), paged; filters: one batch
 * (a key range), a plan, a status (as {@link effectiveStatus} computes it at `nowMs`, epoch MILLISECONDS).
 * Codes of batches still being written are left out, so a page may hold fewer than `limit`.
 * Errors: NOT_FOUND (project absent, of another team or outside the token's scope), VALIDATION_FAILED
 * (a cursor of another list).
 */
export async function listAccessCodes(
  store: Store,
  principal: Principal,
  nowMs: number,
  query: ListAccessCodesInput,
): Promise<Page<AccessCode>> {
  const teamId = principal.teamId;
  requireProjectAccess(principal, query.project_id);
  const page = await listStoredCodes(store, teamId, query.project_id, {
    limit: query.limit,
    cursor: query.cursor,
    batchId: query.batch_id,
    planId: query.plan_id,
    status: query.status,
    now: isoTime(nowMs),
  });
  if (!page) throw new ProblemError('NOT_FOUND', `No project ${query.project_id}.`);
  const visible = await activeBatchIds(
    store,
    teamId,
    query.project_id,
    page.data.map((code) => code.batch_id),
  );
  return {
    data: page.data.filter((code) => visible.has(code.batch_id)).map((code) => publicAccessCode(code, nowMs)),
    next_cursor: page.next_cursor,
  };
}

/**
 * The stored code with id `codeId` in an active batch of an existing project of the principal's team and scope; else
 * NOT_FOUND.
 */
async function findCode(store: Store, principal: Principal, codeId: string): Promise<StoredAccessCode> {
  const ref = await readCodeRef(store, principal.teamId, codeId);
  if (!ref) throw notFound(codeId);
  const { project_id: projectId, batch_id: batchId } = ref;
  if (!canAccessProject(principal, projectId)) throw notFound(codeId);
  const code = await readCodeOfActiveBatch(store, principal.teamId, projectId, batchId, codeId);
  if (!code) throw notFound(codeId);
  return code;
}

/**
 * Reads one code by id (never the code itself: `code_suffix`), its status computed at `nowMs` (epoch
 * MILLISECONDS). Errors: NOT_FOUND (absent, of another team, outside the token's project scope, or in a
 * batch still being written).
 */
export async function getAccessCode(
  store: Store,
  principal: Principal,
  nowMs: number,
  codeId: string,
): Promise<AccessCode> {
  return publicAccessCode(await findCode(store, principal, codeId), nowMs);
}

/**
 * Revokes an active code (DESIGN D18): it can no longer be redeemed; redemptions already made stay.
 * Conditional on the code still being active at the commit, so a concurrent expiry, redemption of the
 * last use or revocation wins cleanly. No webhook event (the catalogue has none for revocation); the
 * activity log records the call. Errors: NOT_FOUND (see {@link getAccessCode}), CONFLICT (the code is
 * revoked, exhausted or expired).
 */
export async function revokeAccessCode(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  codeId: string,
): Promise<AccessCode> {
  const code = await findCode(runtime.store, principal, codeId);
  const nowMs = runtime.clock.nowMs();
  const status = statusAt(code, nowMs);
  const conflict = (current: string) =>
    new ProblemError('CONFLICT', `The access code is ${current}; only an active code can be revoked.`);
  if (status !== 'active') throw conflict(status);
  const now = isoTime(nowMs);
  return unitOfWork(runtime, principal.teamId, (tx: Transaction) => {
    revokeCode(tx, principal.teamId, code, now, () =>
      conflict('no longer active (revoked, used up or expired meanwhile)'),
    );
    return publicAccessCode({ ...code, status: 'revoked', revoked_at: now, updated_at: now }, nowMs);
  });
}
