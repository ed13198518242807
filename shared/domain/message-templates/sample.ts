import type { MessageKind } from '../../catalogues/message-kinds.js';
import { DAY_MS, isoTime } from '../../clock.js';
import { DEFAULT_GRACE_DAYS, type Plan } from '../plans/schema.js';
import type { Project } from '../projects/schema.js';
import type { Subscriber } from '../subscribers/schema.js';
import type { Subscription } from '../subscriptions/schema.js';
import type { MessageContext } from './render.js';

/**
 * The sample a template is checked and previewed against (DESIGN D32): every variable present, so a template that
 * renders here names only documented variables. The preview may put a real subscriber, plan and subscription in it.
 */

const SAMPLE_ID = '00000000-0000-4000-8000-000000000000';
/** The origin of the sample links (a reserved example domain). */
const SAMPLE_ORIGIN = 'https://members.example.com';

/** A sample subscriber of `project`. */
function sampleSubscriber(project: Project, nowIso: string): Subscriber {
  return {
    id: SAMPLE_ID,
    project_id: project.id,
    display_name: 'Alex',
    platform_user_id: null,
    email: 'alex@example.com',
    phone: null,
    consent: true,
    provider_customer_id: null,
    member_id: null,
    status: 'active',
    banned_at: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
}

/** A sample monthly plan of `project` (9.90 EUR). */
function samplePlan(project: Project, nowIso: string): Plan {
  return {
    id: SAMPLE_ID,
    project_id: project.id,
    name: 'Monthly membership',
    description: null,
    grace_days: DEFAULT_GRACE_DAYS,
    allow_promotion_codes: false,
    amount: 990,
    currency: 'EUR',
    interval: 'month',
    interval_count: 1,
    access_days: null,
    trial_days: 7,
    trial_payment_method_required: true,
    status: 'active',
    price_version: 1,
    price_history: [
      {
        version: 1,
        amount: 990,
        currency: 'EUR',
        interval: 'month',
        interval_count: 1,
        access_days: null,
        effective_from: nowIso,
      },
    ],
    sync_status: 'not_synced',
    payment_provider: null,
    provider_product_id: null,
    provider_price_id: null,
    synced_at: null,
    sync_error: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
}

/** A sample subscription to `plan` in the state a message of `kind` is sent in. */
function sampleSubscription(kind: MessageKind, plan: Plan, subscriber: Subscriber, nowMs: number): Subscription {
  const at = (days: number) => isoTime(nowMs + days * DAY_MS);
  const status =
    kind === 'trial_ending'
      ? 'trialing'
      : kind === 'cancellation_scheduled'
        ? 'pending_cancellation'
        : kind === 'paused'
          ? 'paused'
          : kind === 'access_removed'
            ? 'canceled'
            : kind === 'payment_failed' || kind === 'grace_ending'
              ? 'past_due'
              : 'active';
  return {
    id: SAMPLE_ID,
    project_id: plan.project_id,
    subscriber_id: subscriber.id,
    plan_id: plan.id,
    status,
    grace_period_end: status === 'past_due' ? at(DEFAULT_GRACE_DAYS) : null,
    discount: null,
    previous_status: null,
    has_access: status !== 'canceled' && status !== 'paused',
    source: 'provider',
    payment_provider: null,
    price_version: plan.price_version,
    starts_at: at(-27),
    ends_at: null,
    trial_ends_at: kind === 'trial_ending' ? at(3) : null,
    current_period_start: at(-27),
    current_period_end: at(3),
    cancel_at_period_end: status === 'pending_cancellation',
    canceled_at: status === 'pending_cancellation' || status === 'canceled' ? at(-1) : null,
    cancellation_reason: null,
    invite_links: [],
    status_changed_at: status === 'past_due' ? at(0) : at(-1),
    created_at: at(-27),
    updated_at: at(-1),
  };
}

/**
 * The context a template of `kind` is checked and previewed against: `real` parts replace the samples (a real
 * subscriber with, when they have one, their subscription and its plan).
 */
export function sampleContext(
  kind: MessageKind,
  project: Project,
  nowMs: number,
  real: { subscriber?: Subscriber; plan?: Plan; subscription?: Subscription } = {},
): MessageContext {
  const nowIso = isoTime(nowMs);
  const subscriber = real.subscriber ?? sampleSubscriber(project, nowIso);
  const plan = real.plan ?? samplePlan(project, nowIso);
  const link = (path: string) => `${SAMPLE_ORIGIN}/${path}/${project.id}`;
  return {
    project,
    subscriber,
    plan,
    subscription: real.subscription ?? sampleSubscription(kind, plan, subscriber, nowMs),
    links: {
      portal: link('portal'),
      recovery: link('portal/payment-method'),
      sign_in: link('portal/sign-in'),
      confirm: `${link('join')}/confirm`,
      unsubscribe: link('unsubscribe'),
      join: link('join'),
    },
    grace: { ends_at: isoTime(nowMs + DEFAULT_GRACE_DAYS * DAY_MS), day: 0 },
    broadcast: {
      subject: 'News from {{ project.name }}',
      body: 'Hi {{ subscriber.name }}, this is a sample announcement from {{ project.name }}.',
    },
    gift: {
      from: 'sam@example.com',
      message: 'Happy birthday!',
      code: 'GIFT-7KQ2-M4XP',
      redeem_url: `${link('join')}?code=GIFT-7KQ2-M4XP`,
    },
  };
}
