import pMap from 'p-map';
import { isoTime } from '../../clock.js';
import { completeDeadline, type Deadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { expiringCodesPage, readBatchState } from '../../store/access-codes/reads.js';
import { expireCode } from '../../store/access-codes/writes.js';
import { projectExists } from '../../store/subscriptions/reads.js';
import { ConditionFailedError } from '../../store/store.js';
import type { Key } from '../../store/requests.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { toAccessCode } from './repository.js';

/** Code expiries committed at once. */
const EXPIRY_CONCURRENCY = 8;

/**
 * `access_code.expire` deadline (D15, D18): expires a batch's still-active codes, each in its own conditional
 * transaction with its event (D6), so concurrent runs emit once per code. The deadline is removed once a full pass
 * finds nothing left, or when the batch or project is gone.
 */
export const expireAccessCodeBatch: DeadlineHandler = async (runtime, deadline: Deadline) => {
  const { teamId, subjectId: batchId } = deadline;
  const projectId = deadline.projectId;
  if (!projectId) throw new Error(`access_code.expire deadline of batch ${batchId} has no project`);
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  let unsettled = 0;
  const [state, project] = await Promise.all([
    readBatchState(runtime.store, teamId, projectId, batchId),
    projectExists(runtime.store, teamId, projectId),
  ]);
  if (state === 'active' && project) {
    let startKey: Key | undefined;
    do {
      const page = await expiringCodesPage(runtime.store, teamId, projectId, batchId, now, startKey);
      await pMap(
        page.items,
        async (item) => {
          const expired = toAccessCode({ ...item, status: 'expired', updated_at: now }, nowMs);
          try {
            await unitOfWork(runtime, teamId, (tx) => {
              expireCode(tx, item, now);
              tx.emit({ type: 'access_code.expired', projectId, data: { access_code: expired } });
            });
          } catch (error) {
            if (!(error instanceof ConditionFailedError)) throw error;
            unsettled++; // expired by another run, revoked or redeemed meanwhile: the next run looks again
          }
        },
        { concurrency: EXPIRY_CONCURRENCY },
      );
      startKey = page.next;
    } while (startKey);
  }
  if (unsettled > 0) return;
  try {
    await unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline));
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error; // already removed by another run
  }
};
