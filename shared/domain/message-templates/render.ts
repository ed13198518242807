import { formatPrice } from '../../schemas/common.js';
import type { Plan } from '../plans/schema.js';
import type { Project } from '../projects/schema.js';
import type { Subscriber } from '../subscribers/schema.js';
import type { Subscription } from '../subscriptions/schema.js';
import { renderLiquid } from './liquid.js';
import type { MessageTemplate } from './schema.js';
import { DAY_MS } from '../../clock.js';

/**
 * Rendering a message (DESIGN D32): the sender passes domain objects, this module builds the documented Liquid
 * variables from them (prices and dates formatted for people, in the project's time zone) and renders a template for
 * e-mail (subject, text, HTML made from the text) or for a bot (text only).
 */

/** What a message is about; the sender passes domain objects, you build the Liquid variables (formatting included). */
export interface MessageContext {
  project: Project;
  /** Who the message is to (a gift's recipient is no subscriber yet: no name). */
  subscriber: Pick<Subscriber, 'display_name'>;
  plan: Plan | null;
  subscription: Subscription | null;
  links: {
    portal: string | null;
    recovery: string | null;
    sign_in: string | null;
    /** A free join's one-time confirmation link (`join_confirmation` only; absent or null otherwise). */
    confirm?: string | null;
    unsubscribe: string | null;
    join: string | null;
  };
  /** Payment-failed sequence: when access ends (ISO) and the day of the grace period (0, 3, …); null otherwise. */
  grace: { ends_at: string; day: number } | null;
  /** Broadcasts only: the creator's subject and body (themselves Liquid over the same variables). */
  broadcast: { subject: string; body: string } | null;
  /**
   * Gifts only (DESIGN D33): who gave it (their e-mail), their message or null, the one-use access code and the join
   * page that redeems it.
   */
  gift: { from: string; message: string | null; code: string; redeem_url: string } | null;
}

/** What a subscriber without a display name is called (`Hi there,`). */
const NAME_FALLBACK = 'there';
/** Statuses whose current period ends in a renewal. */
const RENEWING_STATUSES: readonly string[] = ['active', 'trialing', 'past_due'];

/** A date (ISO timestamp) as people read it in `timeZone`, e.g. `May 1, 2026`; null stays null. */
function formatDate(iso: string | null, timeZone: string): string | null {
  if (iso === null) return null;
  return new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone }).format(new Date(iso));
}

/** A plan's billing interval in words: `monthly`, `every 3 months`, `one-time`. */
function intervalOf(plan: Plan): string {
  if (plan.interval === 'one_time') return 'one-time';
  if (plan.interval_count === 1) return { week: 'weekly', month: 'monthly', year: 'yearly' }[plan.interval];
  return `every ${plan.interval_count} ${plan.interval}s`;
}

/** The subscription's variables: status in words and its dates in the project's time zone. */
function subscriptionVariables(subscription: Subscription, timeZone: string) {
  const renews = RENEWING_STATUSES.includes(subscription.status) && !subscription.cancel_at_period_end;
  const endsAt = subscription.ends_at ?? (subscription.cancel_at_period_end ? subscription.current_period_end : null);
  return {
    status: subscription.status.replaceAll('_', ' '),
    renews_on: renews && subscription.ends_at === null ? formatDate(subscription.current_period_end, timeZone) : null,
    ends_on: formatDate(endsAt, timeZone),
    trial_ends_on: formatDate(subscription.trial_ends_at, timeZone),
  };
}

/**
 * The Liquid variables of a message (every documented one, null where the context has none; nothing else is
 * reachable). `grace.days_left` counts whole days from the message's day of the grace period (the failure plus
 * `grace.day` days) to the end of access, so it reads the same whenever the message is rendered.
 */
export function messageVariables(context: MessageContext): Record<string, unknown> {
  const timeZone = context.project.time_zone;
  const { plan, subscription, grace, links, broadcast } = context;
  return {
    subscriber: { name: context.subscriber.display_name?.trim() || NAME_FALLBACK },
    project: { name: context.project.name },
    plan: plan && { name: plan.name, price: formatPrice(plan.amount, plan.currency), interval: intervalOf(plan) },
    subscription: subscription && subscriptionVariables(subscription, timeZone),
    grace: grace && {
      ends_on: formatDate(grace.ends_at, timeZone),
      days_left: Math.max(
        0,
        Math.ceil(
          (Date.parse(grace.ends_at) -
            (subscription
              ? Date.parse(subscription.status_changed_at) + grace.day * DAY_MS
              : Date.parse(grace.ends_at))) /
            DAY_MS,
        ),
      ),
    },
    links: {
      portal: links.portal,
      recovery: links.recovery,
      sign_in: links.sign_in,
      confirm: links.confirm ?? null,
      unsubscribe: links.unsubscribe,
      join: links.join,
    },
    broadcast: broadcast && { subject: broadcast.subject, body: broadcast.body },
    gift: context.gift && {
      from: context.gift.from,
      message: context.gift.message,
      code: context.gift.code,
      redeem_url: context.gift.redeem_url,
    },
  };
}

/**
 * The variables with a broadcast's own subject and body rendered first (they are Liquid over the same variables), so
 * `{{ broadcast.body }}` shows the creator's text with its variables filled in.
 */
function variablesWithBroadcast(context: MessageContext): Record<string, unknown> {
  const variables = messageVariables(context);
  if (!context.broadcast) return variables;
  return {
    ...variables,
    broadcast: {
      subject: renderLiquid(context.broadcast.subject, variables),
      body: renderLiquid(context.broadcast.body, variables),
    },
  };
}

/** Collapses runs of blank lines and trims each end: what a template's tags leave behind. */
function tidy(text: string): string {
  return text
    .replace(/[ \t]+$/gm, '')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (character) => ESCAPES[character]);
const LINK = /https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)]/g;

/**
 * The HTML of a plain-text message: escaped, a paragraph per blank-line-separated block, line breaks and links kept.
 */
function htmlOfText(text: string): string {
  return text
    .split(/\n{2,}/)
    .map((paragraph) => {
      const parts: string[] = [];
      let last = 0;
      for (const match of paragraph.matchAll(LINK)) {
        parts.push(escapeHtml(paragraph.slice(last, match.index)));
        const url = escapeHtml(match[0]);
        parts.push(`<a href="${url}">${url}</a>`);
        last = match.index + match[0].length;
      }
      parts.push(escapeHtml(paragraph.slice(last)));
      return `<p>${parts.join('').replace(/\n/g, '<br>\n')}</p>`;
    })
    .join('\n');
}

/**
 * Renders for e-mail (subject, text, html escaped from the text with paragraphs and links) or a bot (text only, subject
 * null). Throws only on a programming error: stored templates were validated on save.
 */
export function renderMessage(
  template: MessageTemplate,
  target: 'email' | 'bot',
  context: MessageContext,
): { subject: string | null; text: string; html: string | null } {
  const variables = variablesWithBroadcast(context);
  if (target === 'bot') return { subject: null, text: tidy(renderLiquid(template.bot.body, variables)), html: null };
  const text = tidy(renderLiquid(template.email.body, variables));
  const subject = renderLiquid(template.email.subject, variables).replace(/\s+/g, ' ').trim();
  return { subject, text, html: htmlOfText(text) };
}
