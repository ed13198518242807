import type { BillingReason } from '../domain/payments/schema.js';
import type { CreatePlanRequest } from '../domain/plans/schema.js';
import type * as z from '../schemas/zod.js';
import { periodEnd } from '../domain/subscriptions/lifecycle.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../clock.js';

/**
 * The demo history's calendar (DESIGN §5), pure: who arrives when, what happens to them later, and which payments that
 * makes. Day numbers count whole UTC days, so the history's shape (payments per day, renewals) is the same on every
 * date.
 */

/**
 * Days of history the demo project gets: day 0 is {@link DEMO_HISTORY_DAYS} − 1 UTC days before today, today is the
 * last.
 */
export const DEMO_HISTORY_DAYS = 60;
/** A renewal payment is recorded this long after its period ends (milliseconds). */
export const RENEWAL_DELAY_MS = 600_000;

/**
 * How a subscriber of the cast came: a recorded first payment (monthly, yearly), a trial, the free plan, or an access
 * code.
 */
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

/**
 * One subscriber of the demo cast: name, arrival day (see {@link castTime}), how, and their platform account, if a
 * member.
 */
export interface CastMember {
  name: string;
  day: number;
  arrival: Arrival;
  platformUserId?: string;
  story?: Story;
}

/**
 * The demo cast (fixed, so every fresh store gets the same history): 48 subscribers — 32 monthly and 6 yearly readers
 * paying through recorded manual payments (one arrives on each of the first 30 days, so renewals fill the second half),
 * 6 trials, 3 free-newsletter readers and one access-code redemption — with two cancellations at the period's end (one
 * ended, one still running), a trial cancelled before it converted, a failed renewal (past_due), a refund and five
 * members. Every day number is at most 58 (yesterday), so every step is past whatever the time of day.
 */
export const CAST: readonly CastMember[] = [
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
  { name: 'Yusuf Aydin', day: 24, arrival: 'monthly' },
  { name: 'Zoe Papadopoulos', day: 25, arrival: 'monthly' },
  { name: 'Anton Maier', day: 26, arrival: 'monthly' },
  { name: 'Bea Kovacs', day: 27, arrival: 'yearly' },
  { name: 'Carl Lund', day: 28, arrival: 'monthly' },
  { name: 'Daria Sokolova', day: 29, arrival: 'monthly' },
  { name: 'Emil Strand', day: 30, arrival: 'trial' },
  { name: 'Sven Aalto', day: 31, arrival: 'free' },
  { name: 'Sofia Marquez', day: 33, arrival: 'monthly' },
  { name: 'Frida Holm', day: 34, arrival: 'monthly' },
  {
    name: 'Goran Petrovic',
    day: 36,
    arrival: 'trial',
    story: { cancel: { day: 39, atPeriodEnd: true, reason: 'Not enough time to read.' } },
  },
  { name: 'Ugo Ferri', day: 38, arrival: 'free' },
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
  { name: 'Vilma Ek', day: 57, arrival: 'yearly' },
];

/** Start of the history (epoch ms): 00:00 UTC of day 0, {@link DEMO_HISTORY_DAYS} − 1 days before `nowMs`'s UTC day. */
export function historyStartMs(nowMs: number): number {
  return nowMs - (nowMs % DAY_MS) - (DEMO_HISTORY_DAYS - 1) * DAY_MS;
}

/** When the cast member at `index` acts on `day` (epoch ms): between 08:00 and 17:59 UTC of that day. */
export function castTime(startMs: number, day: number, index: number): number {
  return startMs + day * DAY_MS + 8 * HOUR_MS + ((index * 137) % 600) * MINUTE_MS;
}

/**
 * The demo project's plans (requests of `createPlan`): monthly with a 7-day trial and a 10-day grace period, yearly,
 * and a free newsletter.
 */
export const DEMO_PLANS = {
  monthly: {
    name: 'Monthly reader',
    amount: 900,
    currency: 'EUR',
    interval: 'month',
    interval_count: 1,
    trial_days: 7,
    // Long enough that the story's failed renewal (day 22 plus a month: day 50 at the earliest) is still past_due on
    // the last day, day 59.
    grace_days: 10,
  },
  yearly: { name: 'Yearly reader', amount: 9000, currency: 'EUR', interval: 'year', interval_count: 1 },
  free: { name: 'Free newsletter', amount: 0, currency: 'EUR', interval: 'month', interval_count: 1 },
} as const satisfies Record<string, z.input<typeof CreatePlanRequest>>;

/** One payment of the history: when it is recorded (epoch ms), why, and how it went. */
export interface ExpectedPayment {
  atMs: number;
  billing_reason: Extract<BillingReason, 'subscription_create' | 'renewal'>;
  status: 'succeeded' | 'failed';
}

/**
 * Every payment the history records up to `nowMs` (epoch ms, in time order): each paying arrival's first payment, then
 * a renewal {@link RENEWAL_DELAY_MS} after each period's end while the subscription is still active (not cancelled,
 * refunded or past due by then); a failing first renewal is recorded, and nothing follows it.
 */
export function expectedPayments(nowMs: number): ExpectedPayment[] {
  const startMs = historyStartMs(nowMs);
  const payments: ExpectedPayment[] = [];
  CAST.forEach((person, index) => {
    if (person.arrival !== 'monthly' && person.arrival !== 'yearly') return;
    const plan = { ...DEMO_PLANS[person.arrival], access_days: null };
    const firstMs = castTime(startMs, person.day, index);
    payments.push({ atMs: firstMs, billing_reason: 'subscription_create', status: 'succeeded' });
    const endDay = person.story?.cancel?.day ?? person.story?.refund?.day;
    const endsMs = endDay === undefined ? Infinity : castTime(startMs, endDay, index);
    let periodEndMs = periodEnd(plan, firstMs, null);
    while (periodEndMs + RENEWAL_DELAY_MS <= Math.min(nowMs, endsMs)) {
      const status = person.story?.renewalFails ? 'failed' : 'succeeded';
      payments.push({ atMs: periodEndMs + RENEWAL_DELAY_MS, billing_reason: 'renewal', status });
      if (status === 'failed') break;
      periodEndMs = periodEnd(plan, periodEndMs, null);
    }
  });
  return payments.sort((a, b) => a.atMs - b.atMs);
}
