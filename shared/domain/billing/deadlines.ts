import { isoTime } from '../../clock.js';
import { completeDeadline, deadlineItem, type Deadline, type DeadlineHandler } from '../../deadlines/deadline.js';
import { billingStore } from '../../store/billing.js';
import { ConditionFailedError } from '../../store/store.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { decideBillingPeriod, decideGracePeriodEnd } from './decisions.js';
import { readBillingItems } from './reads.js';
import { issueInvoice, periodDeadline, writeBilling } from './transactions.js';

/** The clock handlers of billing (DESIGN D20): the `billing.period` and `billing.grace_period` deadlines. */

/**
 * Runs a deadline's unit of work; when it fails because another run applied (or moved) the deadline
 * first — the deadline item is gone or has another due time — it did nothing and that is success.
 */
async function applyOnce(runtime: UnitOfWorkRuntime, deadline: Deadline, work: () => Promise<unknown>): Promise<void> {
  try {
    await work();
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    const dueAt = await billingStore.deadlineDueAt(runtime.store, deadline.teamId, deadline.kind, deadline.subjectId);
    if (dueAt === deadline.dueAt) throw error;
  }
}

/**
 * The `billing.period` deadline (DESIGN D20): a new monthly period starts at its due time. On a paid
 * tier it issues the period's invoice (`billing.invoice_created`) and moves the deadline to the period's
 * end; on `free` it issues nothing and the deadline goes (a later move to a paid tier schedules it
 * again). The deadline's move or removal is conditional on its due time in the same transaction, so
 * applying it twice does nothing. A deleted team's deadline is dropped.
 */
export const applyBillingPeriodDeadline: DeadlineHandler = async (runtime, deadline) => {
  const teamId = deadline.teamId;
  const { team, billing } = await readBillingItems(runtime.store, teamId);
  const nowMs = runtime.clock.nowMs();
  const step = decideBillingPeriod(teamId, team, billing, deadline.dueAt, nowMs);
  if (step.kind === 'drop') {
    await applyOnce(runtime, deadline, () => unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline)));
    return;
  }
  const { tier, period, next, account } = step;
  await applyOnce(runtime, deadline, () =>
    unitOfWork(runtime, teamId, (tx) => {
      // Moved to the period's end by a put conditional on the due time applied (one write of the deadline item).
      billingStore.moveDeadline(tx, deadlineItem(periodDeadline(teamId, period.endMs)), deadline.dueAt);
      writeBilling(tx, teamId, billing, next);
      issueInvoice(tx, teamId, {
        tier,
        startMs: period.startMs,
        endMs: period.endMs,
        nowIso: isoTime(nowMs),
        sequence: next.invoice_sequence,
        account,
      });
    }),
  );
};

/**
 * The `billing.grace_period` deadline (DESIGN D20): the grace period ended unpaid, so the team is locked
 * (`billing.grace_period_ended` with outcome `locked`, then `billing.lockdown_started`): from now on its
 * creator writes get BILLING_LOCKED until it pays. A team that paid meanwhile (status no longer
 * `grace_period`) only loses the deadline. Applying it twice does nothing (conditional removal).
 */
export const applyGracePeriodDeadline: DeadlineHandler = async (runtime, deadline) => {
  const teamId = deadline.teamId;
  const { team, billing } = await readBillingItems(runtime.store, teamId);
  const step = decideGracePeriodEnd(teamId, team, billing, runtime.clock.nowMs());
  if (step.kind === 'drop') {
    await applyOnce(runtime, deadline, () => unitOfWork(runtime, teamId, (tx) => completeDeadline(tx, deadline)));
    return;
  }
  const { next, account, unpaid } = step;
  await applyOnce(runtime, deadline, () =>
    unitOfWork(runtime, teamId, (tx) => {
      completeDeadline(tx, deadline);
      writeBilling(tx, teamId, billing, next);
      tx.emit({
        type: 'billing.grace_period_ended',
        projectId: null,
        data: { billing_account: account, outcome: 'locked' },
      });
      tx.emit({
        type: 'billing.lockdown_started',
        projectId: null,
        data: {
          billing_account: account,
          reason: `${unpaid} invoice(s) of the team\u2019s tier are unpaid 7 days after the first failed payment; creator writes are refused until they are paid.`,
        },
      });
    }),
  );
};
