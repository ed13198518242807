/**
 * The subscription state machine (DESIGN D15), every (status, trigger) pair: the cases are generated
 * from the transition table itself, so a changed table changes the test. Allowed pairs move to the
 * table's status and name its event; every other pair is CONFLICT naming the current status and the
 * allowed triggers. Also the access and terminal columns and the "(new)" row.
 */
import { describe, expect, it } from 'vitest';
import { SUBSCRIPTION_STATUS_VALUES, type SubscriptionStatus } from '../../shared/catalogues/subscription-statuses.js';
import { WEBHOOK_EVENTS } from '../../shared/catalogues/webhook-events.js';
import { ProblemError } from '../../shared/errors.js';
import {
  NON_TERMINAL_STATUSES,
  SUBSCRIPTION_ACCESS,
  SUBSCRIPTION_TERMINAL,
  SUBSCRIPTION_TRIGGERS,
  TRANSITION_TABLE,
  allowedTriggers,
  initialStatus,
  ruleFor,
  transition,
  type SubscriptionTrigger,
} from '../../shared/domain/subscriptions/state-machine.js';

const pairs = SUBSCRIPTION_STATUS_VALUES.flatMap((status) =>
  SUBSCRIPTION_TRIGGERS.map((trigger) => [status, trigger] as [SubscriptionStatus, SubscriptionTrigger]),
);

describe('subscription state machine (D15)', () => {
  it('covers the 13 statuses and 18 triggers (234 pairs)', () => {
    expect(SUBSCRIPTION_STATUS_VALUES).toHaveLength(13);
    expect(pairs).toHaveLength(13 * SUBSCRIPTION_TRIGGERS.length);
  });

  it('has exactly one rule per allowed (status, trigger) pair', () => {
    for (const [status, trigger] of pairs) {
      expect(
        TRANSITION_TABLE.filter((rule) => rule.trigger === trigger && rule.from.includes(status)).length,
        `${status} × ${trigger}`,
      ).toBeLessThanOrEqual(1);
    }
  });

  it.each(pairs)(
    '%s × %s: moves as the table says, or is CONFLICT naming the status and the allowed triggers',
    (status, trigger) => {
      const rule = ruleFor(status, trigger);
      if (rule) {
        for (const inTrial of [false, true]) {
          const result = transition(status, trigger, { inTrial });
          const expected =
            rule.to === 'unchanged'
              ? status
              : rule.to === 'trialing_or_active'
                ? inTrial
                  ? 'trialing'
                  : 'active'
                : rule.to;
          expect(result).toEqual({ from: status, to: expected, event: rule.event });
          expect(rule.event.startsWith('subscription.')).toBe(true);
        }
        expect(SUBSCRIPTION_TERMINAL[status]).toBe(false);
      } else {
        let thrown: unknown;
        try {
          transition(status, trigger);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(ProblemError);
        const problem = thrown as ProblemError;
        expect(problem.code).toBe('CONFLICT');
        expect(problem.message).toContain(`is ${status}`);
        expect(problem.message).toContain(trigger);
        const allowed = allowedTriggers(status);
        if (allowed.length === 0) expect(problem.message).toContain('allows no action');
        for (const other of allowed) expect(problem.message).toContain(other);
      }
    },
  );

  it('names only catalogue events, and every subscription.* transition event but created is reachable', () => {
    const names = new Set(WEBHOOK_EVENTS.map((event) => event.name));
    for (const rule of TRANSITION_TABLE) expect(names.has(rule.event), rule.event).toBe(true);
    const reachable = new Set(TRANSITION_TABLE.map((rule) => rule.event));
    const family = WEBHOOK_EVENTS.filter(
      (event) => event.name.startsWith('subscription.') && event.name !== 'subscription.created',
    ).map((event) => event.name);
    expect([...reachable].sort()).toEqual([...family].sort());
  });

  it('terminal statuses allow nothing; every non-terminal one can be canceled now', () => {
    for (const status of SUBSCRIPTION_STATUS_VALUES) {
      if (SUBSCRIPTION_TERMINAL[status]) expect(allowedTriggers(status)).toEqual([]);
      else
        expect(transition(status, 'cancel')).toEqual({ from: status, to: 'canceled', event: 'subscription.canceled' });
    }
    expect(NON_TERMINAL_STATUSES).toHaveLength(10);
  });

  it('has D15’s access column', () => {
    const withAccess = SUBSCRIPTION_STATUS_VALUES.filter((status) => SUBSCRIPTION_ACCESS[status]);
    expect(withAccess).toEqual(['trialing', 'active', 'pending_cancellation', 'past_due']);
  });

  it('starts new subscriptions as the (new) row says', () => {
    expect(initialStatus({ awaitingAsyncPayment: true })).toBe('pending');
    expect(initialStatus({ firstPaymentFailed: true })).toBe('incomplete');
    expect(initialStatus({ startsInFuture: true, trial: true })).toBe('scheduled');
    expect(initialStatus({ trial: true })).toBe('trialing');
    expect(initialStatus({})).toBe('active');
  });
});
