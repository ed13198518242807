import { isoTime } from '../../clock.js';
import { completeDeadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { logger } from '../../logger.js';
import { giftStore } from '../../store/gifts.js';
import { planStore } from '../../store/plans.js';
import { ConditionFailedError } from '../../store/store.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import type { Principal } from '../../auth/principal.js';
import type { Runtime } from '../../runtime.js';
import { generateAccessCodes } from '../access-codes/generation.js';
import { revokeAccessCode } from '../access-codes/repository.js';
import { toPlan } from '../plans/repository.js';
import { toGift } from './record.js';

/**
 * Delivering a paid gift (DESIGN D33, D18): the `gift.delivery` deadline generates ONE one-use `free_access` code for
 * one term of the plan (`access_days` null = one period of a recurring plan; a pass's `access_days`), then marks the
 * gift `delivered` with the code in one transaction conditional on `paid` that also removes the deadline: a second
 * run (or a concurrent one) loses, revokes the code it made and sends nothing. The winner e-mails the code to the
 * recipient (`gift` message); the code stays on the gift, for the buyer's receipt page, only until that e-mail left.
 */

/** The principal a delivery acts as: the gift's team, narrowed to its project (no token). */
function deliveryPrincipal(teamId: string, projectId: string): Principal {
  return { tokenId: 'deadline:gift', teamId, abilities: new Set(), projectIds: [projectId] };
}

/** The `gift.delivery` deadline (see the module note). Throws on store errors (the deadline stays for the next run). */
export const applyGiftDelivery: DeadlineHandler = async (runtime, deadline) => {
  const projectId = deadline.projectId ?? '';
  const stored = await giftStore.read(runtime.store, deadline.teamId, projectId, deadline.subjectId);
  const finish = async () => {
    try {
      await unitOfWork(runtime, deadline.teamId, (tx) => completeDeadline(tx, deadline));
    } catch (error) {
      if (!(error instanceof ConditionFailedError)) throw error;
    }
  };
  if (!stored || stored.status !== 'paid') return finish();
  const gift = toGift(stored);
  const planItem = await planStore.read(runtime.store, deadline.teamId, gift.plan_id);
  if (!planItem) return finish();
  const plan = toPlan(planItem);
  const principal = deliveryPrincipal(deadline.teamId, projectId);
  const generated = await generateAccessCodes(runtime, principal, {
    project_id: projectId,
    plan_id: plan.id,
    count: 1,
    effect: 'free_access',
    access_days: plan.interval === 'one_time' ? plan.access_days : null,
    max_redemptions: 1,
    expires_at: null,
  });
  const [code] = generated.codes;
  const now = isoTime(runtime.clock.nowMs());
  try {
    await unitOfWork(runtime, deadline.teamId, (tx) => {
      giftStore.transition(tx, deadline.teamId, gift, 'paid', {
        status: 'delivered',
        access_code_id: code.id,
        code: code.code,
        delivered_at: now,
        updated_at: now,
      });
      completeDeadline(tx, deadline);
    });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    // Another run delivered the gift (or the deadline moved): this run's code must never work.
    await revokeAccessCode(runtime, principal, code.id);
    return;
  }
  const { sendGiftMessage } = await import('./message.js');
  if (await sendGiftMessage(runtime as Runtime, deadline.teamId, gift, plan, code.code))
    await giftStore.markEmailed(runtime.store, deadline.teamId, gift, isoTime(runtime.clock.nowMs()));
  else logger.info('gift code held for the buyer\u2019s receipt page', { gift_id: gift.id });
};
