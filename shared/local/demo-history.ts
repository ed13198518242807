import type { Principal } from '../auth/principal.js';
import type { ManualClock } from '../clock.js';
import { deadlineOf } from '../deadlines/deadline.js';
import { DEADLINE_HANDLERS } from '../deadlines/handlers.js';
import { applyDueDeadlines } from '../deadlines/worker.js';
import { redeemAccessCode } from '../domain/access-codes/redemption.js';
import { RedeemAccessCodeRequest } from '../domain/access-codes/schema.js';
import { recordPlatformMembership } from '../domain/members/platform-updates.js';
import { refundPayment } from '../domain/payments/changes.js';
import { recordPayment } from '../domain/payments/recording.js';
import { RecordPaymentRequest } from '../domain/payments/schema.js';
import type { Plan } from '../domain/plans/schema.js';
import { createSubscriber } from '../domain/subscribers/repository.js';
import { CreateSubscriberRequest } from '../domain/subscribers/schema.js';
import { createSubscription } from '../domain/subscriptions/creation.js';
import { DAY_MS, nextDueTrigger, periodEnd } from '../domain/subscriptions/lifecycle.js';
import { toSubscription } from '../domain/subscriptions/records.js';
import type { Subscription } from '../domain/subscriptions/schema.js';
import { cancelSubscription } from '../domain/subscriptions/transitions.js';
import type { IntegrationRuntime } from '../integrations.js';
import { paymentProviderAdapters } from '../providers/adapters.js';
import { keys } from '../store/keys.js';
import type { UnitOfWorkRuntime } from '../store/unit-of-work.js';

/** Days of history the demo project gets before "now" (DESIGN §5). */
export const DEMO_HISTORY_DAYS = 60;

/** The demo project the history is written into: its plans and one unredeemed access code (its text). */
export interface DemoHistoryProject {
  id: string;
  monthly: Plan;
  yearly: Plan;
  free: Plan;
  accessCode: string;
}

/** How a subscriber of the cast came: a recorded first payment (monthly, yearly), a trial, the free plan, or an access code. */
type Arrival = 'monthly' | 'yearly' | 'trial' | 'free' | 'code';

/** What happens to one subscriber later (day numbers count from the start of the history). */
interface Story {
  /** Cancels on this day: at the period's end (default) or at once. */
  cancel?: { day: number; atPeriodEnd: boolean; reason: string };
  /** The first renewal payment fails (the subscription goes past_due). */
  renewalFails?: boolean;
  /** The first payment is refunded in full on this day, cancelling the subscription. */
  refund?: { day: number; reason: string };
  /** Leaves the project's community on this day (members only). */
  leaves?: number;
}

/** One subscriber of the demo cast: name, arrival day (0 = {@link DEMO_HISTORY_DAYS} days ago), how, and their platform account, if a member. */
interface CastMember {
  name: string;
  day: number;
  arrival: Arrival;
  platformUserId?: string;
  story?: Story;
}

/**
 * The demo cast (fixed, so every fresh store gets the same history): 46 subscribers — 30 monthly and 6
 * yearly readers paying through recorded manual payments, 6 trials, 3 free-newsletter readers and one
 * access-code redemption — with two cancellations at the period's end (one ended, one still running), a
 * trial cancelled before it converted, a failed renewal (past_due), a refund and five members.
 */
const CAST: readonly CastMember[] = [
  { name: 'Ada Lindqvist', day: 0, arrival: 'monthly', platformUserId: '5012340001' },
  { name: 'Bruno Costa', day: 1, arrival: 'monthly' },
  {
    name: 'Chiara Romano',
    day: 2,
    arrival: 'monthly',
    platformUserId: '5012340003',
    story: { cancel: { day: 20, atPeriodEnd: true, reason: 'Moving abroad for a year.' }, leaves: 35 },
  },
  { name: 'Dmitri Volkov', day: 3, arrival: 'monthly' },
  { name: 'Elif Demir', day: 4, arrival: 'monthly' },
  { name: 'Finn Murphy', day: 5, arrival: 'monthly' },
  { name: 'Greta Hansen', day: 6, arrival: 'monthly', platformUserId: '5012340007' },
  { name: 'Hugo Lefebvre', day: 7, arrival: 'monthly' },
  { name: 'Ines Moreau', day: 8, arrival: 'monthly' },
  { name: 'Jonas Weber', day: 9, arrival: 'monthly' },
  { name: 'Kaja Nowak', day: 10, arrival: 'monthly' },
  { name: 'Lars Eriksen', day: 11, arrival: 'monthly' },
  { name: 'Mila Horvat', day: 12, arrival: 'yearly' },
  { name: 'Nora Fischer', day: 13, arrival: 'monthly' },
  { name: 'Oskar Berg', day: 14, arrival: 'monthly' },
  { name: 'Paula Santos', day: 15, arrival: 'monthly' },
  { name: 'Quentin Blanc', day: 16, arrival: 'monthly' },
  { name: 'Rosa Jimenez', day: 17, arrival: 'monthly' },
  { name: 'Stefan Ionescu', day: 18, arrival: 'monthly' },
  { name: 'Tove Nilsson', day: 19, arrival: 'monthly' },
  { name: 'Umberto Ricci', day: 20, arrival: 'monthly' },
  { name: 'Vera Kowalski', day: 21, arrival: 'yearly', platformUserId: '5012340022' },
  { name: 'Wim de Vries', day: 22, arrival: 'monthly', story: { renewalFails: true } },
  { name: 'Xenia Popescu', day: 23, arrival: 'monthly' },
  { name: 'Yusuf Aydin', day: 24, arrival: 'free' },
  { name: 'Zoe Papadopoulos', day: 25, arrival: 'monthly' },
  { name: 'Anton Maier', day: 26, arrival: 'monthly' },
  { name: 'Bea Kovacs', day: 27, arrival: 'yearly' },
  { name: 'Carl Lund', day: 28, arrival: 'monthly' },
  { name: 'Daria Sokolova', day: 29, arrival: 'free' },
  { name: 'Emil Strand', day: 30, arrival: 'trial' },
  { name: 'Sofia Marquez', day: 33, arrival: 'monthly' },
  { name: 'Frida Holm', day: 34, arrival: 'monthly' },
  {
    name: 'Goran Petrovic',
    day: 36,
    arrival: 'trial',
    story: { cancel: { day: 39, atPeriodEnd: true, reason: 'Not enough time to read.' } },
  },
  { name: 'Hanna Virtanen', day: 40, arrival: 'code', platformUserId: '5012340034' },
  { name: 'Ivo Marin', day: 43, arrival: 'trial' },
  {
    name: 'Julia Brandt',
    day: 44,
    arrival: 'yearly',
    story: { refund: { day: 46, reason: 'Bought the wrong plan.' } },
  },
  { name: 'Kemal Yilmaz', day: 46, arrival: 'free' },
  { name: 'Lea Schmid', day: 47, arrival: 'trial' },
  { name: 'Tomas Novak', day: 48, arrival: 'monthly' },
  {
    name: 'Marek Dvorak',
    day: 49,
    arrival: 'monthly',
    story: { cancel: { day: 53, atPeriodEnd: true, reason: 'Too busy this season.' } },
  },
  { name: 'Nina Kralj', day: 53, arrival: 'yearly' },
  { name: 'Olaf Sorensen', day: 55, arrival: 'trial' },
  { name: 'Pia Gruber', day: 56, arrival: 'monthly' },
  { name: 'Rafael Ortiz', day: 58, arrival: 'trial' },
  { name: 'Vilma Ek', day: 59, arrival: 'yearly' },
];

/** One step of the history at a time (epoch ms); steps run in time order, ties in the order they were added. */
interface Step {
  atMs: number;
  order: number;
  run: () => Promise<void>;
}

/**
 * Writes the demo history (DESIGN §5) into `project` through the API's domain functions, day by day on the manual `clock` from {@link DEMO_HISTORY_DAYS} days before `nowMs` (epoch ms).
 * Due deadlines are applied as they fall due, so nothing past is left due; steps after `nowMs` are not taken. Events stay in the outbox.
 */
export async function seedDemoHistory(
  runtime: UnitOfWorkRuntime & IntegrationRuntime & { clock: ManualClock },
  principal: Principal,
  project: DemoHistoryProject,
  nowMs: number,
): Promise<void> {
  const clock = runtime.clock;
  const startMs = nowMs - DEMO_HISTORY_DAYS * DAY_MS;
  const steps: Step[] = [];
  const checks = new Set<string>();
  let order = 0;
  const at = (atMs: number, run: () => Promise<void>) => {
    if (atMs <= nowMs) steps.push({ atMs, order: order++, run });
  };
  const dayTime = (day: number, index: number) => startMs + day * DAY_MS + ((index * 137) % 600) * 60_000;
  const readSubscription = async (id: string): Promise<Subscription> =>
    toSubscription((await runtime.store.get(keys.subscription(principal.teamId, id)))!);

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
      const item = await runtime.store.get(keys.deadline(principal.teamId, 'subscription.clock', subscription.id));
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
    at(periodEndMs + 600_000, async () => {
      if ((await readSubscription(subscriptionId)).status !== 'active') return;
      await recordPayment(
        runtime,
        principal,
        project.id,
        RecordPaymentRequest.parse({
          subscription_id: subscriptionId,
          status: fails ? 'failed' : 'succeeded',
          billing_reason: 'renewal',
        }),
      );
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
        at(clock.nowMs() + 3 * 3_600_000, async () => {
          await recordPlatformMembership(runtime, {
            teamId: principal.teamId,
            projectId: project.id,
            platformUserId: person.platformUserId!,
            change: 'joined',
            displayName: person.name,
          });
        });
      }
      if (person.arrival === 'code') {
        const redemption = await redeemAccessCode(
          runtime,
          principal,
          project.id,
          RedeemAccessCodeRequest.parse({ code: project.accessCode, subscriber: contact }),
        );
        subscriptionId = redemption.subscription.id;
        watchClock(redemption.subscription);
        return;
      }
      const subscriber = await createSubscriber(runtime, principal, project.id, CreateSubscriberRequest.parse(contact));
      if (person.arrival === 'monthly' || person.arrival === 'yearly') {
        // Active until its period ends (nothing for the clock): then its renewal payment.
        const plan = person.arrival === 'monthly' ? project.monthly : project.yearly;
        const payment = await recordPayment(
          runtime,
          principal,
          project.id,
          RecordPaymentRequest.parse({ subscriber_id: subscriber.id, plan_id: plan.id, status: 'succeeded' }),
        );
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
      const subscription = await createSubscription(runtime, principal, project.id, {
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
          await cancelSubscription(runtime, principal, subscriptionId!, { at_period_end: atPeriodEnd, reason }),
        );
      });
    }
    if (story?.refund) {
      const { reason } = story.refund;
      at(dayTime(story.refund.day, index), async () => {
        await refundPayment(
          runtime,
          principal,
          firstPaymentId!,
          { cancel: true, reason },
          { adapters: paymentProviderAdapters(runtime) },
        );
      });
    }
    if (story?.leaves !== undefined) {
      at(dayTime(story.leaves, index), async () => {
        await recordPlatformMembership(runtime, {
          teamId: principal.teamId,
          projectId: project.id,
          platformUserId: person.platformUserId!,
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
