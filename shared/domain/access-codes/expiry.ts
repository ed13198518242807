import pMap from 'p-map';
import { isoTime } from '../../clock.js';
import { completeDeadline, type Deadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { keys, sortKeyPrefix } from '../../store/keys.js';
import { ConditionFailedError } from '../../store/store.js';
import type { Key } from '../../store/requests.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { toAccessCode } from './repository.js';

/** Codes read per page while a batch expires. */
const EXPIRY_PAGE_SIZE = 100;
/** Code expiries committed at once. */
const EXPIRY_CONCURRENCY = 8;

/**
 * `access_code.expire` deadline (D15, D18): expires a batch's still-active codes, each in its own conditional transaction with its event (D6), so
 * concurrent runs emit once per code. The deadline is removed once a full pass finds nothing left, or when the batch or project is gone.
 */
export const expireAccessCodeBatch: DeadlineHandler = async (runtime, deadline: Deadline) => {
  const { teamId, subjectId: batchId } = deadline;
  const projectId = deadline.projectId;
  if (!projectId) throw new Error(`access_code.expire deadline of batch ${batchId} has no project`);
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  let unsettled = 0;
  const [batch, project] = await Promise.all([
    runtime.store.get(keys.accessCodeBatch(teamId, projectId, batchId)),
    runtime.store.get(keys.project(teamId, projectId), { projection: 'pk' }),
  ]);
  if (batch?.state === 'active' && project) {
    let startKey: Key | undefined;
    do {
      const page = await runtime.store.query({
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
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      });
      await pMap(
        page.items,
        async (item) => {
          const expired = toAccessCode({ ...item, status: 'expired', updated_at: now }, nowMs);
          try {
            await unitOfWork(runtime, teamId, (tx) => {
              tx.update(
                { pk: item.pk, sk: item.sk },
                {
                  expression: 'SET #status = :expired, updated_at = :now',
                  condition:
                    'attribute_exists(pk) AND #status = :active AND times_redeemed = :times AND code_expires_at <= :now',
                  names: { '#status': 'status' },
                  values: { ':expired': 'expired', ':active': 'active', ':times': item.times_redeemed, ':now': now },
                },
              );
              tx.emit({ type: 'access_code.expired', projectId, data: { access_code: expired } });
            });
          } catch (error) {
            if (!(error instanceof ConditionFailedError)) throw error;
            unsettled++; // expired by another run, revoked or redeemed meanwhile: the next run looks again
          }
        },
        { concurrency: EXPIRY_CONCURRENCY },
      );
      startKey = page.lastEvaluatedKey;
    } while (startKey);
  }
  if (unsettled > 0) return;
  try {
    await unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline));
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error; // already removed by another run
  }
};
