import { codeDigest } from '../../domain/access-codes/codes.js';
import {
  parseStoredAccessCode,
  parseStoredAccessCodeLookup,
  parseStoredAccessCodeRef,
  parseStoredBatchState,
  type StoredAccessCode,
} from '../../domain/access-codes/record.js';
import type { AccessCodeStatus } from '../../domain/access-codes/schema.js';
import { entity, keys, sortKeyPrefix } from '../keys.js';
import { queryPage, type Page } from '../pages.js';
import type { Item, Key } from '../requests.js';
import type { Store } from '../store.js';
import { projectExists } from '../subscriptions/reads.js';

/**
 * Reads of access codes (DESIGN D12, D18): codes in their project's partition, grouped by batch; a batch item
 * whose `state` hides its codes until it is `active`; a reference item per code id and a lookup item per code,
 * keyed by the SHA-256 of its normalized text.
 */

/** The ids among `batchIds` of batches that are `active` (one BatchGetItem; none without ids). */
export async function activeBatchIds(
  store: Store,
  teamId: string,
  projectId: string,
  batchIds: Iterable<string>,
): Promise<Set<string>> {
  const ids = [...new Set(batchIds)];
  if (ids.length === 0) return new Set();
  const items = await store.batchGet(ids.map((batchId) => keys.accessCodeBatch(teamId, projectId, batchId)));
  return new Set(items.map(parseStoredBatchState).flatMap((batch) => (batch.state === 'active' ? [batch.id] : [])));
}

/** What {@link listStoredCodes} filters on: one batch, a plan, a status as it is at `now` (ISO 8601). */
export interface CodeListQuery {
  limit: number;
  cursor?: string;
  batchId?: string;
  planId?: string;
  status?: AccessCodeStatus;
  now: string;
}

/**
 * A page of a project's stored codes in key order (grouped by batch), filtered in the query (a page may be short
 * with `next_cursor` set); null when the project is gone. Errors: VALIDATION_FAILED (cursor of another list).
 */
export async function listStoredCodes(
  store: Store,
  teamId: string,
  projectId: string,
  query: CodeListQuery,
): Promise<Page<StoredAccessCode> | null> {
  const conditions: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  if (query.planId) {
    conditions.push('plan_id = :plan');
    values[':plan'] = query.planId;
  }
  if (query.status) {
    names['#status'] = 'status';
    values[':status'] = query.status;
    if (query.status === 'active') {
      conditions.push('#status = :status AND (attribute_not_exists(code_expires_at) OR code_expires_at > :now)');
      values[':now'] = query.now;
    } else if (query.status === 'expired') {
      conditions.push('(#status = :status OR (#status = :active AND code_expires_at <= :now))');
      values[':active'] = 'active';
      values[':now'] = query.now;
    } else {
      conditions.push('#status = :status');
    }
  }
  const [found, page] = await Promise.all([
    projectExists(store, teamId, projectId),
    queryPage(store, {
      partition: keys.accessCodePartition(teamId, projectId),
      sortKeyPrefix: query.batchId ? sortKeyPrefix.accessCodeInBatch(query.batchId) : sortKeyPrefix.accessCode,
      limit: query.limit,
      cursor: query.cursor,
      map: parseStoredAccessCode,
      filter: conditions.length
        ? { expression: conditions.join(' AND '), names: Object.keys(names).length ? names : undefined, values }
        : undefined,
    }),
  ]);
  return found ? page : null;
}

/** Where a code id lives: its project and batch (its reference item, strongly consistent), or undefined. */
export async function readCodeRef(
  store: Store,
  teamId: string,
  codeId: string,
): Promise<{ project_id: string; batch_id: string } | undefined> {
  const ref = await store.get(keys.accessCodeRef(teamId, codeId));
  return ref ? parseStoredAccessCodeRef(ref) : undefined;
}

/**
 * The stored code `codeId` of a batch of a project (one BatchGetItem of code, batch and project), or undefined
 * unless all three exist and the batch is `active`.
 */
export async function readCodeOfActiveBatch(
  store: Store,
  teamId: string,
  projectId: string,
  batchId: string,
  codeId: string,
): Promise<StoredAccessCode | undefined> {
  const items = await store.batchGet([
    keys.accessCode(teamId, projectId, batchId, codeId),
    keys.accessCodeBatch(teamId, projectId, batchId),
    keys.project(teamId, projectId),
  ]);
  const code = items.find((item) => item.entity === entity.accessCode);
  const batch = items.find((item) => item.entity === entity.accessCodeBatch);
  const project = items.find((item) => item.entity === entity.project);
  if (!code || !batch || parseStoredBatchState(batch).state !== 'active' || !project) return undefined;
  return parseStoredAccessCode(code);
}

/** The state of a batch (strongly consistent), or undefined when there is no such batch. */
export async function readBatchState(
  store: Store,
  teamId: string,
  projectId: string,
  batchId: string,
): Promise<'pending' | 'active' | 'discarded' | undefined> {
  const batch = await store.get(keys.accessCodeBatch(teamId, projectId, batchId));
  return batch ? parseStoredBatchState(batch).state : undefined;
}

/**
 * The code `presented` among a project's codes (its lookup item by digest, strongly consistent): id and batch, or
 * undefined.
 */
export async function readCodeLookup(
  store: Store,
  teamId: string,
  projectId: string,
  presented: string,
): Promise<{ codeId: string; batchId: string } | undefined> {
  const lookup = await store.get(keys.accessCodeLookup(teamId, projectId, codeDigest(presented)));
  if (!lookup) return undefined;
  const stored = parseStoredAccessCodeLookup(lookup);
  return { codeId: stored.access_code_id, batchId: stored.batch_id };
}

/** The stored code item (strongly consistent), or undefined. */
export async function readCodeItem(
  store: Store,
  teamId: string,
  location: { projectId: string; batchId: string; codeId: string },
): Promise<Item | undefined> {
  return store.get(keys.accessCode(teamId, location.projectId, location.batchId, location.codeId));
}

/** Whether `subscriberId` redeemed code `codeId` already (its redemption item, strongly consistent). */
export async function hasRedeemed(
  store: Store,
  teamId: string,
  codeId: string,
  subscriberId: string,
): Promise<boolean> {
  return (await store.get(keys.accessCodeRedemption(teamId, codeId, subscriberId))) !== undefined;
}

/** Codes read per page while a batch expires. */
const EXPIRY_PAGE_SIZE = 100;

/**
 * One page (at most 100 evaluated) of a batch's stored code items still `active` whose expiry is at or before
 * `now` (ISO 8601), strongly consistent; `next` is the start of the following page, undefined after the last.
 */
export async function expiringCodesPage(
  store: Store,
  teamId: string,
  projectId: string,
  batchId: string,
  now: string,
  start: Key | undefined,
): Promise<{ items: Item[]; next: Key | undefined }> {
  const page = await store.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    FilterExpression: '#status = :active AND code_expires_at <= :now',
    ExpressionAttributeNames: { '#status': 'status' },
    ExpressionAttributeValues: {
      ':pk': keys.accessCodePartition(teamId, projectId),
      ':prefix': sortKeyPrefix.accessCodeInBatch(batchId),
      ':active': 'active',
      ':now': now,
    },
    Limit: EXPIRY_PAGE_SIZE,
    ExclusiveStartKey: start,
    ConsistentRead: true,
  });
  return { items: page.items, next: page.lastEvaluatedKey };
}

/** Reads a project and a plan in one BatchGetItem: the items (undefined when absent). */
export async function readProjectAndPlan(
  store: Store,
  teamId: string,
  projectId: string,
  planId: string,
): Promise<{ project: Item | undefined; plan: Item | undefined }> {
  const items = await store.batchGet([keys.project(teamId, projectId), keys.plan(teamId, planId)]);
  return {
    project: items.find((item) => item.entity === entity.project),
    plan: items.find((item) => item.entity === entity.plan),
  };
}
