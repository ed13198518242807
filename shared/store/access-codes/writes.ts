import { codeDigest, codeSuffix } from '../../domain/access-codes/codes.js';
import type { AccessCode, AccessCodeBatch } from '../../domain/access-codes/schema.js';
import type { ProblemError } from '../../errors.js';
import { ITEM_ABSENT, ITEM_EXISTS } from '../expressions.js';
import { entity, keys } from '../keys.js';
import type { Item } from '../requests.js';
import type { ConditionFailedError, Store } from '../store.js';
import type { Transaction } from '../unit-of-work.js';

/**
 * Writes of access codes (DESIGN D6, D14, D18): a batch written `pending`, its codes (each with its lookup and
 * reference items) in chunks, the batch flipped `active` last or discarded; a code's use, revocation and expiry,
 * each conditional on the code still being what the decision read.
 */

/** What a failed condition means to the caller (the domain's ProblemError). */
type OnConditionFailed = () => ProblemError;

/** The condition of a code that can still be used or revoked at `:now`: active and unexpired. */
const LIVE = '#status = :active AND (attribute_not_exists(code_expires_at) OR code_expires_at > :now)';

/**
 * Adds the checks that the project is still active and the plan still active and of the project
 * (`changed` answers a failed one).
 */
export function checkPlanOfProjectActive(
  tx: Transaction,
  teamId: string,
  projectId: string,
  planId: string,
  changed: OnConditionFailed,
): void {
  tx.check(keys.project(teamId, projectId), {
    condition: `${ITEM_EXISTS} AND #status = :active`,
    names: { '#status': 'status' },
    values: { ':active': 'active' },
    onConditionFailed: changed,
  });
  tx.check(keys.plan(teamId, planId), {
    condition: `${ITEM_EXISTS} AND project_id = :project AND #status = :active`,
    names: { '#status': 'status' },
    values: { ':project': projectId, ':active': 'active' },
    onConditionFailed: changed,
  });
}

/** Adds the put of a new batch in state `pending` (its codes stay invisible until {@link activateBatch}). */
export function putPendingBatch(tx: Transaction, teamId: string, batch: AccessCodeBatch): void {
  const { expires_at: expiresAt, ...fields } = batch;
  tx.put(
    {
      ...keys.accessCodeBatch(teamId, batch.project_id, batch.id),
      entity: entity.accessCodeBatch,
      team_id: teamId,
      ...fields,
      code_expires_at: expiresAt ?? undefined,
      state: 'pending',
    },
    { condition: ITEM_ABSENT },
  );
}

/** Items each code of {@link putCodes} writes, in order: the code, its lookup, its reference. */
const ITEMS_PER_CODE = 3;

/**
 * Adds the puts of `codes` of `batch` created at `now` (ISO 8601): per code its item (active, unused, with
 * `code_sha256`, its lookup key, so a cleanup finds the lookup), its lookup item (by digest) and its reference item,
 * each conditional on being new.
 */
export function putCodes(
  tx: Transaction,
  teamId: string,
  batch: AccessCodeBatch,
  codes: readonly { id: string; code: string }[],
  now: string,
): void {
  const projectId = batch.project_id;
  for (const code of codes) {
    const digest = codeDigest(code.code);
    const item: Item = {
      ...keys.accessCode(teamId, projectId, batch.id, code.id),
      entity: entity.accessCode,
      team_id: teamId,
      id: code.id,
      project_id: projectId,
      batch_id: batch.id,
      plan_id: batch.plan_id,
      code_suffix: codeSuffix(code.code),
      code_sha256: digest,
      effect: batch.effect,
      access_days: batch.access_days,
      max_redemptions: batch.max_redemptions,
      times_redeemed: 0,
      code_expires_at: batch.expires_at ?? undefined,
      status: 'active',
      revoked_at: null,
      created_at: now,
      updated_at: now,
    };
    tx.put(item, { condition: ITEM_ABSENT });
    tx.put(
      {
        ...keys.accessCodeLookup(teamId, projectId, digest),
        entity: entity.accessCodeLookup,
        team_id: teamId,
        project_id: projectId,
        access_code_id: code.id,
        batch_id: batch.id,
        code_sk: item.sk,
      },
      { condition: ITEM_ABSENT },
    );
    tx.put(
      {
        ...keys.accessCodeRef(teamId, code.id),
        entity: entity.accessCodeRef,
        team_id: teamId,
        project_id: projectId,
        batch_id: batch.id,
      },
      { condition: ITEM_ABSENT },
    );
  }
}

/**
 * The positions (in the `codes` given to {@link putCodes}) of the codes whose writes failed in `error` — a code
 * taken by an earlier batch (ids are fresh UUIDs, so only lookups collide); empty when it names none.
 */
export function collidingCodes(error: ConditionFailedError): Set<number> {
  return new Set(error.failedItems.map((index) => Math.floor(index / ITEMS_PER_CODE)));
}

/** Adds the flip of a batch from `pending` to `active` (fails when it is no longer pending). */
export function activateBatch(tx: Transaction, teamId: string, projectId: string, batchId: string): void {
  tx.update(keys.accessCodeBatch(teamId, projectId, batchId), {
    expression: 'SET #state = :active',
    condition: '#state = :pending',
    names: { '#state': 'state' },
    values: { ':active': 'active', ':pending': 'pending' },
  });
}

/**
 * Moves a batch from `pending` to `discarded`. Throws ConditionFailedError when it is not pending (e.g. it committed).
 */
export async function discardPendingBatch(
  store: Store,
  teamId: string,
  projectId: string,
  batchId: string,
): Promise<void> {
  await store.update({
    Key: keys.accessCodeBatch(teamId, projectId, batchId),
    UpdateExpression: 'SET #state = :discarded',
    ConditionExpression: '#state = :pending',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':discarded': 'discarded', ':pending': 'pending' },
  });
}

/**
 * Adds the deletion of written codes of a batch: each code item, and its lookup and reference items if still of this
 * batch.
 */
export function deleteCodes(
  tx: Transaction,
  teamId: string,
  projectId: string,
  batchId: string,
  codes: readonly { id: string; code: string }[],
): void {
  const ofBatch = { condition: 'batch_id = :batch', values: { ':batch': batchId } };
  for (const code of codes) {
    tx.delete(keys.accessCode(teamId, projectId, batchId, code.id));
    tx.delete(keys.accessCodeLookup(teamId, projectId, codeDigest(code.code)), ofBatch);
    tx.delete(keys.accessCodeRef(teamId, code.id), ofBatch);
  }
}

/** Deletes a batch item. */
export async function deleteBatch(store: Store, teamId: string, projectId: string, batchId: string): Promise<void> {
  await store.delete({ Key: keys.accessCodeBatch(teamId, projectId, batchId) });
}

/**
 * Adds the use of a code at `now` (ISO 8601), conditional on it still being live: `last` takes its last use
 * (`exhausted`), `before_last` one use while more than one is left, `unlimited` one use of an unlimited code.
 */
export function writeCodeUse(
  tx: Transaction,
  teamId: string,
  code: AccessCode,
  take: 'unlimited' | 'before_last' | 'last',
  now: string,
): void {
  const key = keys.accessCode(teamId, code.project_id, code.batch_id, code.id);
  const names = { '#status': 'status' };
  // Read only for a limited code (`take` is `last` or `before_last` only then).
  const max = code.max_redemptions ?? 0;
  if (take === 'last') {
    tx.update(key, {
      expression: 'SET times_redeemed = :max, #status = :exhausted, updated_at = :now',
      condition: `${ITEM_EXISTS} AND ${LIVE} AND times_redeemed = :last_use`,
      names,
      values: { ':active': 'active', ':now': now, ':max': max, ':exhausted': 'exhausted', ':last_use': max - 1 },
    });
    return;
  }
  tx.update(key, {
    expression: 'SET updated_at = :now ADD times_redeemed :one',
    condition: `${ITEM_EXISTS} AND ${LIVE}${take === 'before_last' ? ' AND times_redeemed < :last_use' : ''}`,
    names,
    values: {
      ':active': 'active',
      ':now': now,
      ':one': 1,
      ...(take === 'before_last' ? { ':last_use': max - 1 } : {}),
    },
  });
}

/**
 * Adds the redemption item of a code by a subscriber for a subscription at `now`; `alreadyRedeemed` answers one that
 * exists.
 */
export function putRedemption(
  tx: Transaction,
  teamId: string,
  redemption: { projectId: string; codeId: string; subscriberId: string; subscriptionId: string; now: string },
  alreadyRedeemed: OnConditionFailed,
): void {
  tx.put(
    {
      ...keys.accessCodeRedemption(teamId, redemption.codeId, redemption.subscriberId),
      entity: entity.accessCodeRedemption,
      team_id: teamId,
      project_id: redemption.projectId,
      access_code_id: redemption.codeId,
      subscriber_id: redemption.subscriberId,
      subscription_id: redemption.subscriptionId,
      redeemed_at: redemption.now,
    },
    { condition: ITEM_ABSENT, onConditionFailed: alreadyRedeemed },
  );
}

/**
 * Adds the revocation of a live code at `now` (ISO 8601); `noLongerActive` answers a code used up, revoked or expired
 * meanwhile.
 */
export function revokeCode(
  tx: Transaction,
  teamId: string,
  code: { project_id: string; batch_id: string; id: string },
  now: string,
  noLongerActive: OnConditionFailed,
): void {
  tx.update(keys.accessCode(teamId, code.project_id, code.batch_id, code.id), {
    expression: 'SET #status = :revoked, revoked_at = :now, updated_at = :now',
    condition: `${ITEM_EXISTS} AND ${LIVE}`,
    names: { '#status': 'status' },
    values: { ':revoked': 'revoked', ':active': 'active', ':now': now },
    onConditionFailed: noLongerActive,
  });
}

/**
 * Adds the expiry at `now` (ISO 8601) of a stored code item, conditional on it being unchanged: active, unused since
 * read, expired.
 */
export function expireCode(tx: Transaction, read: Item, now: string): void {
  tx.update(
    { pk: read.pk, sk: read.sk },
    {
      expression: 'SET #status = :expired, updated_at = :now',
      condition: `${ITEM_EXISTS} AND #status = :active AND times_redeemed = :times AND code_expires_at <= :now`,
      names: { '#status': 'status' },
      values: { ':expired': 'expired', ':active': 'active', ':times': read.times_redeemed, ':now': now },
    },
  );
}
