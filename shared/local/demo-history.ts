import type { ManualClock } from '../clock.js';
import { deadlineOf } from '../deadlines/deadline.js';
import { DEADLINE_HANDLERS } from '../deadlines/handlers.js';
import { applyDueDeadlines } from '../deadlines/worker.js';
import type { Plan } from '../domain/plans/schema.js';
import { nextDueTrigger, periodEnd } from '../domain/subscriptions/lifecycle.js';
import type { Subscription } from '../domain/subscriptions/schema.js';
import { deadlineStore } from '../store/deadlines.js';
import { CAST, castTime, historyStartMs, RENEWAL_DELAY_MS } from './demo-calendar.js';
import { HOUR_MS } from '../clock.js';
import type { Payment } from '../domain/payments/schema.js';
import type { Runtime } from '../runtime.js';
import type { DemoOperate } from './demo-operator.js';

/** The demo project the history is written into: its team, its plans and one unredeemed access code (its text). */
export interface DemoHistoryProject {
  teamId: string;
  id: string;
  monthly: Plan;
  yearly: Plan;
  free: Plan;
  accessCode: string;
}

/** One step of the history at a time (epoch ms); steps run in time order, ties in the order they were added. */
interface Step {
  atMs: number;
  order: number;
  run: () => Promise<void>;
}

/**
 * Writes the demo history (DESIGN §5) into `project` with operations run by `operate` (the pipeline, as the operator),
 * step by step on the manual `clock` along the calendar of `demo-calendar.ts`, up to `nowMs` (epoch ms): a fan joining
 * or leaving the Telegram group is the operation the hook runs; a deadline falling due goes to the handler the
 * deadline worker calls. Steps after `nowMs` are not taken; events stay in the outbox.
 */
export async function seedDemoHistory(
  runtime: Runtime & { clock: ManualClock },
  operate: DemoOperate,
  project: DemoHistoryProject,
  nowMs: number,
): Promise<void> {
  const { teamId } = project;
  const clock = runtime.clock;
  const startMs = historyStartMs(nowMs);
  const steps: Step[] = [];
  const checks = new Set<string>();
  let order = 0;
  const at = (atMs: number, run: () => Promise<void>) => {
    if (atMs <= nowMs) steps.push({ atMs, order: order++, run });
  };
  const dayTime = (day: number, index: number) => castTime(startMs, day, index);
  const readSubscription = (id: string): Promise<Subscription> => operate<Subscription>('getSubscription', { id });

  /**
   * When `subscription`'s next clock trigger is due (once per subscription and time), its
   * `subscription.clock` deadline goes to the handler the deadline worker dispatches it to, as the worker
   * would a minute later (one keyed read instead of the worker's scan of every index shard).
   */
  const watchClock = (subscription: Subscription) => {
    const due = nextDueTrigger(subscription);
    if (!due || checks.has(`${subscription.id} ${due.atMs}`)) return;
    checks.add(`${subscription.id} ${due.atMs}`);
    at(due.atMs + 60_000, async () => {
      const item = await deadlineStore.read(runtime.store, {
        teamId,
        kind: 'subscription.clock',
        subjectId: subscription.id,
      });
      const deadline = item ? deadlineOf(item) : null;
      if (deadline && Date.parse(deadline.dueAt) <= clock.nowMs())
        await DEADLINE_HANDLERS['subscription.clock'](runtime, deadline);
      watchClock(await readSubscription(subscription.id));
    });
  };

  /**
   * A recorded subscription's renewal payment at the end of its period (`periodEndMs`, epoch ms) while it
   * is active: succeeded (the next one is due at the new period's end), or failed for `fails` (past_due).
   */
  const watchRenewal = (subscriptionId: string, plan: Plan, periodEndMs: number, fails: boolean) => {
    at(periodEndMs + RENEWAL_DELAY_MS, async () => {
      if ((await readSubscription(subscriptionId)).status !== 'active') return;
      await operate('recordPayment', {
        project_id: project.id,
        subscription_id: subscriptionId,
        status: fails ? 'failed' : 'succeeded',
        billing_reason: 'renewal',
      });
      if (!fails) watchRenewal(subscriptionId, plan, periodEnd(plan, periodEndMs, null), false);
    });
  };

  CAST.forEach((person, index) => {
    let subscriptionId: string | undefined;
    let firstPaymentId: string | undefined;
    at(dayTime(person.day, index), async () => {
      const contact = {
        display_name: person.name,
        email: `${person.name.toLowerCase().replaceAll(' ', '.')}@example.com`,
        consent: index % 3 !== 0,
        ...(person.platformUserId ? { platform_user_id: person.platformUserId } : {}),
      };
      if (person.platformUserId) {
        at(clock.nowMs() + 3 * HOUR_MS, async () => {
          await operate('recordPlatformMembership', {
            project_id: project.id,
            platform_user_id: person.platformUserId!,
            change: 'joined',
            display_name: person.name,
          });
        });
      }
      if (person.arrival === 'code') {
        const redemption = await operate<{ subscription: Subscription }>('redeemAccessCode', {
          project_id: project.id,
          code: project.accessCode,
          subscriber: contact,
        });
        subscriptionId = redemption.subscription.id;
        watchClock(redemption.subscription);
        return;
      }
      const subscriber = await operate<{ id: string }>('createSubscriber', { project_id: project.id, ...contact });
      if (person.arrival === 'monthly' || person.arrival === 'yearly') {
        // Active until its period ends (nothing for the clock): then its renewal payment.
        const plan = person.arrival === 'monthly' ? project.monthly : project.yearly;
        const payment = await operate<Payment>('recordPayment', {
          project_id: project.id,
          subscriber_id: subscriber.id,
          plan_id: plan.id,
          status: 'succeeded',
        });
        [subscriptionId, firstPaymentId] = [payment.subscription_id, payment.id];
        watchRenewal(
          subscriptionId,
          plan,
          periodEnd(plan, Date.parse(payment.created_at), null),
          person.story?.renewalFails ?? false,
        );
        return;
      }
      const plan = person.arrival === 'free' ? project.free : project.monthly;
      const subscription = await operate<Subscription>('createSubscription', {
        project_id: project.id,
        subscriber_id: subscriber.id,
        plan_id: plan.id,
        trial: person.arrival === 'trial',
      });
      subscriptionId = subscription.id;
      watchClock(subscription);
    });
    const story = person.story;
    if (story?.cancel) {
      const { atPeriodEnd, reason } = story.cancel;
      at(dayTime(story.cancel.day, index), async () => {
        watchClock(
          await operate<Subscription>('cancelSubscription', {
            id: subscriptionId!,
            at_period_end: atPeriodEnd,
            reason,
          }),
        );
      });
    }
    if (story?.refund) {
      const { reason } = story.refund;
      at(dayTime(story.refund.day, index), async () => {
        await operate('refundPayment', { id: firstPaymentId!, cancel: true, reason });
      });
    }
    if (story?.leaves !== undefined) {
      at(dayTime(story.leaves, index), async () => {
        await operate('recordPlatformMembership', {
          project_id: project.id,
          platform_user_id: person.platformUserId!,
          change: 'left',
        });
      });
    }
  });

  while (steps.length) {
    // The earliest step (ties: first added); steps add later ones while they run.
    const next = steps.reduce((best, step) =>
      step.atMs < best.atMs || (step.atMs === best.atMs && step.order < best.order) ? step : best,
    );
    steps.splice(steps.indexOf(next), 1);
    if (next.atMs > clock.nowMs()) clock.set(next.atMs);
    await next.run();
  }
  clock.set(nowMs);
  await applyDueDeadlines(runtime, nowMs);
}
