/** @jsx h */
import { ProblemError } from '../../errors.js';
import {
  DEFAULT_GRACE_DAYS,
  MAX_ACCESS_DAYS,
  MAX_GRACE_DAYS,
  MAX_TRIAL_DAYS,
  PLAN_INTERVALS,
  type Plan,
} from '../../domain/plans/schema.js';
import { currencyExponent, minorToMajor, toMinorUnits } from '../../schemas/common.js';
import { CsrfField, IdempotencyField, type Viewer } from '../components.js';
import { ActionButton } from '../form-controls.js';
import { h, type Html } from '../../web/html.js';
import { formText } from '../http.js';

/**
 * The dashboard's plan form (DESIGN D16, D21, D33), for creating and changing a plan: the values as typed, the
 * operation's input from them (the price typed in the currency's MAJOR unit, converted exactly by `toMinorUnits`), and
 * the markup.
 */

/** What the plan form holds: the text as typed (amount in the major unit). */
export interface PlanValues {
  name?: string;
  description?: string;
  amount?: string;
  currency?: string;
  interval?: string;
  interval_count?: string;
  access_days?: string;
  trial_days?: string;
  /** `true` or `false`: whether a trial asks for a card. */
  trial_payment_method_required?: string;
  /** `true` or `false`: whether buyers may type a promotion code in Stripe Checkout. */
  allow_promotion_codes?: string;
  grace_days?: string;
}

/** The form values of a stored plan, to show it for editing: the amount in the major unit, numbers as text. */
export function valuesOfPlan(plan: Plan): PlanValues {
  return {
    name: plan.name,
    description: plan.description ?? '',
    amount: minorToMajor(plan.amount, plan.currency),
    currency: plan.currency,
    interval: plan.interval,
    interval_count: String(plan.interval_count),
    access_days: plan.access_days === null ? '' : String(plan.access_days),
    trial_days: String(plan.trial_days),
    trial_payment_method_required: String(plan.trial_payment_method_required),
    allow_promotion_codes: String(plan.allow_promotion_codes),
    grace_days: String(plan.grace_days),
  };
}

/** The form values of a posted form: text trimmed, empty fields undefined, the currency upper-cased. */
export function valuesOfForm(form: URLSearchParams): PlanValues {
  const field = (name: keyof PlanValues) => formText(form, name);
  return {
    name: field('name'),
    description: field('description'),
    amount: field('amount'),
    currency: field('currency')?.toUpperCase(),
    interval: field('interval'),
    interval_count: field('interval_count'),
    access_days: field('access_days'),
    trial_days: field('trial_days'),
    trial_payment_method_required: field('trial_payment_method_required'),
    allow_promotion_codes: field('allow_promotion_codes'),
    grace_days: field('grace_days'),
  };
}

/**
 * The operation's fields from the form: the amount converted to minor units of the currency, numbers as
 * numbers, empty fields left out. A price that is not an amount of the currency is VALIDATION_FAILED
 * (field `form.amount`) before anything runs.
 */
export function planInputOf(
  values: PlanValues,
): { ok: true; input: Record<string, unknown> } | { ok: false; error: ProblemError } {
  const currency = values.currency ?? '';
  const amount = values.amount === undefined ? null : toMinorUnits(values.amount, currency || 'USD');
  if (amount === null) {
    const exponent = currencyExponent(currency || 'USD');
    return {
      ok: false,
      error: new ProblemError('VALIDATION_FAILED', 'The price is not an amount of the currency.', {
        errors: [
          {
            path: 'form.amount',
            message: `${exponent === 0 ? `must be a whole number of ${currency} (it has no minor unit)` : `must be a number in ${currency || 'the currency'} with at most ${exponent} decimals`}, e.g. ${minorToMajor(990 * 10 ** Math.max(0, exponent - 2), currency || 'USD')}`,
          },
        ],
      }),
    };
  }
  const number = (text: string | undefined) => (text === undefined ? undefined : Number(text));
  return {
    ok: true,
    input: {
      name: values.name,
      ...(values.description ? { description: values.description } : {}),
      amount,
      currency,
      interval: values.interval,
      ...(values.interval_count ? { interval_count: number(values.interval_count) } : {}),
      ...(values.interval === 'one_time' && values.access_days ? { access_days: number(values.access_days) } : {}),
      ...(values.interval !== 'one_time' && values.trial_days ? { trial_days: number(values.trial_days) } : {}),
      ...(values.interval !== 'one_time' && values.trial_payment_method_required
        ? { trial_payment_method_required: values.trial_payment_method_required !== 'false' }
        : {}),
      ...(values.allow_promotion_codes ? { allow_promotion_codes: values.allow_promotion_codes === 'true' } : {}),
      ...(values.grace_days ? { grace_days: number(values.grace_days) } : {}),
    },
  };
}

/** The plan form (create and edit). */
export function PlanForm(props: {
  viewer: Viewer;
  action: string;
  values?: PlanValues;
  submit: string;
  ability: 'project-subscription-plan:create' | 'project-subscription-plan:update';
  cancel: string;
}): Html {
  const values = props.values ?? {};
  return (
    <form method="post" action={props.action} class="stack" id="plan-form">
      <CsrfField viewer={props.viewer} />
      <IdempotencyField />
      <div>
        <label for="plan-name">Name</label>
        <input type="text" id="plan-name" name="name" required maxlength="100" value={values.name ?? ''} />
      </div>
      <div>
        <label for="plan-description">Description (optional)</label>
        <input type="text" id="plan-description" name="description" maxlength="1000" value={values.description ?? ''} />
      </div>
      <div class="row">
        <div>
          <label for="plan-amount">Price</label>
          <input
            type="text"
            id="plan-amount"
            name="amount"
            required
            inputmode="decimal"
            pattern="[0-9]+([.,][0-9]+)?"
            placeholder="19.90"
            value={values.amount ?? ''}
          />
          <span class="hint">In the currency’s main unit, e.g. 19.90 EUR or 500 JPY.</span>
        </div>
        <div>
          <label for="plan-currency">Currency</label>
          <input
            type="text"
            id="plan-currency"
            name="currency"
            required
            maxlength="3"
            pattern="[A-Za-z]{3}"
            placeholder="EUR"
            value={values.currency ?? 'EUR'}
          />
          <span class="hint">ISO 4217 code.</span>
        </div>
      </div>
      <div class="row">
        <div>
          <label for="plan-interval">Billing interval</label>
          <select id="plan-interval" name="interval">
            {PLAN_INTERVALS.map((interval) => (
              <option value={interval} selected={(values.interval ?? 'month') === interval}>
                {interval === 'one_time' ? 'one time (a pass)' : interval}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label for="plan-interval-count">Intervals per period</label>
          <input
            type="number"
            id="plan-interval-count"
            name="interval_count"
            min="1"
            max="52"
            value={values.interval_count ?? '1'}
          />
        </div>
      </div>
      <div class="row">
        <div>
          <label for="plan-access-days">Access days (one-time passes)</label>
          <input
            type="number"
            id="plan-access-days"
            name="access_days"
            min="1"
            max={String(MAX_ACCESS_DAYS)}
            value={values.access_days ?? ''}
          />
        </div>
        <div>
          <label for="plan-trial-days">Free trial days (recurring plans)</label>
          <input
            type="number"
            id="plan-trial-days"
            name="trial_days"
            min="0"
            max={String(MAX_TRIAL_DAYS)}
            value={values.trial_days ?? '0'}
          />
        </div>
        <div>
          <label for="plan-trial-card">Card for a trial</label>
          <select id="plan-trial-card" name="trial_payment_method_required">
            <option value="true">required at sign-up</option>
            <option value="false" selected={values.trial_payment_method_required === 'false'}>
              not required (the trial ends without one)
            </option>
          </select>
        </div>
      </div>
      <div>
        <label for="plan-promotion-codes">Promotion codes in Stripe Checkout</label>
        <select id="plan-promotion-codes" name="allow_promotion_codes">
          <option value="false">only from the join page’s link or field</option>
          <option value="true" selected={values.allow_promotion_codes === 'true'}>
            buyers may also type one at Stripe
          </option>
        </select>
      </div>
      <div>
        <label for="plan-grace-days">Grace period (days)</label>
        <input
          type="number"
          id="plan-grace-days"
          name="grace_days"
          min="0"
          max={String(MAX_GRACE_DAYS)}
          aria-describedby="plan-grace-days-hint"
          value={values.grace_days ?? String(DEFAULT_GRACE_DAYS)}
        />
        <span class="hint" id="plan-grace-days-hint">
          How long a member whose renewal failed keeps access while the payment is retried.
        </span>
      </div>
      <div class="actions">
        <ActionButton viewer={props.viewer} ability={props.ability} label={props.submit} />
        <a href={props.cancel}>Cancel</a>
      </div>
    </form>
  );
}
