import { ProblemError } from '../../errors.js';
import { DAY_MS } from '../../clock.js';
import { MAX_GIFT_DELAY_DAYS } from './schema.js';

/**
 * Gift delivery dates (DESIGN D33): a calendar day in the project's time zone, delivered at its start; today (or a
 * past instant) means at once.
 */

/** The calendar day (`YYYY-MM-DD`) of `epochMs` in `timeZone`. */
export function dayIn(epochMs: number, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
    new Date(epochMs),
  );
}

/** The offset (ms) of `timeZone` from UTC at `epochMs` (positive east of Greenwich). */
function offsetAt(epochMs: number, timeZone: string): number {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    })
      .formatToParts(new Date(epochMs))
      .map((part) => [part.type, Number(part.value)]),
  );
  const wall = Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second);
  return wall - Math.floor(epochMs / 1000) * 1000;
}

/** The instant (epoch ms) day `day` (`YYYY-MM-DD`) starts in `timeZone`. */
function startOfDay(day: string, timeZone: string): number {
  const [year, month, date] = day.split('-').map(Number);
  const utcMidnight = Date.UTC(year, month - 1, date);
  const guess = utcMidnight - offsetAt(utcMidnight, timeZone);
  return utcMidnight - offsetAt(guess, timeZone);
}

/**
 * When a gift chosen for `day` (default today) is delivered (epoch ms): the day's start in `timeZone`, or now for
 * today. Errors: VALIDATION_FAILED (`deliver_on` before today or more than {@link MAX_GIFT_DELAY_DAYS} days ahead).
 */
export function deliveryTime(day: string | undefined, timeZone: string, nowMs: number): number {
  const today = dayIn(nowMs, timeZone);
  const chosen = day ?? today;
  const refuse = (message: string) =>
    new ProblemError('VALIDATION_FAILED', `deliver_on ${message}.`, { errors: [{ path: 'deliver_on', message }] });
  if (chosen < today) throw refuse(`must not be before today (${today} in ${timeZone})`);
  const startMs = startOfDay(chosen, timeZone);
  if (startMs > nowMs + MAX_GIFT_DELAY_DAYS * DAY_MS) throw refuse(`must be at most ${MAX_GIFT_DELAY_DAYS} days ahead`);
  return chosen === today ? nowMs : startMs;
}
