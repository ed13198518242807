/**
 * The demo history's calendar (DESIGN §5) keeps its promises on every date: whatever day and time `npm start` runs,
 * the history has payments on at least 50 of its 60 days, renewals among them, a failed renewal still in its grace
 * period (past_due, not yet unpaid), and nothing in the future.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  CAST,
  castTime,
  DEMO_HISTORY_DAYS,
  DEMO_PLANS,
  expectedPayments,
  historyStartMs,
} from '../../shared/local/demo-calendar.js';
import { DAY_MS } from '../../shared/clock.js';

/** Two years from 2027-01-01 (a leap February included), in milliseconds. */
const FROM_MS = Date.UTC(2027, 0, 1);
const SPAN_MS = 731 * DAY_MS;

/** What the history at `nowMs` (epoch ms) fails of its promises: an empty list when it keeps them all. */
function brokenPromises(nowMs: number): string[] {
  const broken: string[] = [];
  const payments = expectedPayments(nowMs);
  const recent = payments.filter(({ atMs }) => atMs >= nowMs - DEMO_HISTORY_DAYS * DAY_MS);
  const dates = new Set(recent.map(({ atMs }) => new Date(atMs).toISOString().slice(0, 10)));
  if (dates.size < 50) broken.push(`payments on ${dates.size} days`);
  const renewals = payments.filter((payment) => payment.billing_reason === 'renewal' && payment.status === 'succeeded');
  if (renewals.length < 10) broken.push(`${renewals.length} renewals`);
  const failed = payments.filter((payment) => payment.status === 'failed');
  if (failed.length !== 1) broken.push('not one failed payment');
  if (failed.some(({ atMs }) => atMs + DEMO_PLANS.monthly.grace_days * DAY_MS <= nowMs))
    broken.push('the failed renewal\u2019s grace period is over (unpaid, not past_due)');
  if (payments.some(({ atMs }) => atMs > nowMs)) broken.push('a payment after now');
  // Every step of the cast happened before now and within the 60 days.
  const startMs = historyStartMs(nowMs);
  if (startMs < nowMs - DEMO_HISTORY_DAYS * DAY_MS) broken.push('starts more than 60 days ago');
  CAST.forEach((person, index) => {
    const days = [person.day, person.story?.cancel?.day, person.story?.refund?.day, person.story?.leaves];
    if (days.some((day) => day !== undefined && castTime(startMs, day, index) >= nowMs))
      broken.push(`${person.name} acts after now`);
  });
  return broken.map((problem) => `${new Date(nowMs).toISOString()}: ${problem}`);
}

describe('demo calendar', () => {
  it('keeps its promises at the start, middle and end of every UTC day of two years', () => {
    const broken: string[] = [];
    for (let dayMs = FROM_MS; dayMs < FROM_MS + SPAN_MS; dayMs += DAY_MS)
      for (const timeMs of [0, 12 * 3_600_000, DAY_MS - 1]) broken.push(...brokenPromises(dayMs + timeMs));
    expect(broken).toEqual([]);
  });

  it('keeps its promises at any moment', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: SPAN_MS - 1 }),
        (offsetMs) => brokenPromises(FROM_MS + offsetMs).length === 0,
      ),
      { numRuns: 500 },
    );
  });
});
