/**
 * Message templates (DESIGN D32) without a store: every kind's default renders for e-mail and for a bot; prices are
 * formatted per currency (JPY without decimals, EUR with two) and dates in the project's time zone; the HTML part is
 * escaped with paragraphs and links; an unknown variable or filter is refused with its line and column; the sandbox
 * has no `include`, `render` or `layout` and no prototype access.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { MESSAGE_KIND_VALUES } from '../../shared/catalogues/message-kinds.js';
import { ProblemError } from '../../shared/errors.js';
import { renderMessage, type MessageContext } from '../../shared/domain/message-templates/render.js';
import { requireRenderable } from '../../shared/domain/message-templates/validation.js';
import { sampleContext } from '../../shared/domain/message-templates/sample.js';
import { defaultMessageTemplate, type MessageTemplate } from '../../shared/domain/message-templates/templates.js';
import { isTimeZone, type Project } from '../../shared/domain/projects/schema.js';

const NOW = Date.parse('2026-05-01T10:00:00.000Z');

const project: Project = {
  id: '11111111-1111-4111-8111-111111111111',
  name: 'Night Owls',
  platform_type: 'telegram',
  description: null,
  status: 'active',
  bot: null,
  payment_provider: null,
  resources: [],
  time_zone: 'UTC',
  archived_at: null,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
};

/** A template with the given texts (delivery `preferred`). */
const templateOf = (email: { subject: string; body: string }, bot = 'bot'): MessageTemplate => ({
  kind: 'welcome',
  delivery: 'preferred',
  email,
  bot: { body: bot },
  is_default: false,
  updated_at: null,
});

/** The e-mail text of `body` rendered against the sample context changed by `change`. */
function emailText(body: string, change: (context: MessageContext) => MessageContext = (context) => context): string {
  return renderMessage(templateOf({ subject: 's', body }), 'email', change(sampleContext('welcome', project, NOW)))
    .text;
}

/** The field errors of rendering `texts` against the sample, or [] when it renders. */
function errorsOf(texts: Parameters<typeof requireRenderable>[0]) {
  try {
    requireRenderable(texts, sampleContext('welcome', project, NOW));
    return [];
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    expect(error.code).toBe('VALIDATION_FAILED');
    return error.errors ?? [];
  }
}

beforeEach(() => {
  vi.useFakeTimers({ now: NOW, toFake: ['Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('default templates', () => {
  it.each(MESSAGE_KIND_VALUES)('%s renders for e-mail and a bot against the sample, using its variables', (kind) => {
    const template = defaultMessageTemplate(kind);
    const context = sampleContext(kind, project, NOW);
    const email = renderMessage(template, 'email', context);
    const bot = renderMessage(template, 'bot', context);
    expect(email.subject).toMatch(/\S/);
    expect(email.subject).not.toMatch(/\{\{|\{%/);
    expect(email.text.length).toBeGreaterThan(20);
    expect(email.html).toContain('<p>');
    expect(bot).toMatchObject({ subject: null, html: null });
    expect(bot.text.length).toBeGreaterThan(10);
    for (const text of [email.text, bot.text]) {
      expect(text).not.toMatch(/\{\{|\{%|\n{3}/);
      expect(text).toContain(kind === 'broadcast' ? 'sample announcement from Night Owls' : 'Night Owls');
    }
    expect(template).toMatchObject({ kind, delivery: 'preferred', is_default: true, updated_at: null });
  });

  it('links the recovery page when a payment failed and the portal in the welcome', () => {
    const failed = renderMessage(
      defaultMessageTemplate('payment_failed'),
      'email',
      sampleContext('payment_failed', project, NOW),
    );
    expect(failed.text).toContain('https://members.example.com/portal/payment-method/');
    expect(failed.text).toContain('until May 8, 2026 (7 days left)');
    expect(failed.html).toMatch(/<a href="https:\/\/members\.example\.com\/portal\/payment-method\/[^"]+">/);
    const welcome = renderMessage(defaultMessageTemplate('welcome'), 'bot', sampleContext('welcome', project, NOW));
    expect(welcome.text).toContain('https://members.example.com/portal/');
  });

  it('reads well without optional parts: no plan, no subscription, no links, no display name', () => {
    const bare = (context: MessageContext): MessageContext => ({
      ...context,
      subscriber: { ...context.subscriber, display_name: null },
      plan: null,
      subscription: null,
      links: { portal: null, recovery: null, sign_in: null, unsubscribe: null, join: null },
    });
    const text = renderMessage(
      defaultMessageTemplate('welcome'),
      'email',
      bare(sampleContext('welcome', project, NOW)),
    ).text;
    expect(text).toMatch(/^Hi there,\n\nwelcome to Night Owls!\n\nHow to get in/);
    expect(text).not.toContain('Manage your membership');
  });
});

describe('variables', () => {
  it('formats prices per currency: no decimals for JPY, two for EUR', () => {
    const priced = (amount: number, currency: string) => (context: MessageContext) => ({
      ...context,
      plan: { ...context.plan!, amount, currency },
    });
    expect(emailText('{{ plan.price }}', priced(1500, 'JPY'))).toBe('¥1,500');
    expect(emailText('{{ plan.price }}', priced(990, 'EUR'))).toBe('€9.90');
    expect(emailText('{{ plan.price }}', priced(1234, 'KWD'))).toMatch(/^KWD\s1\.234$/);
  });

  it('shows dates in the project’s time zone', () => {
    const renewing = (timeZone: string) => (context: MessageContext) => ({
      ...context,
      project: { ...context.project, time_zone: timeZone },
      subscription: { ...context.subscription!, current_period_end: '2026-06-30T23:30:00.000Z' },
    });
    expect(emailText('{{ subscription.renews_on }}', renewing('UTC'))).toBe('June 30, 2026');
    expect(emailText('{{ subscription.renews_on }}', renewing('Asia/Tokyo'))).toBe('July 1, 2026');
    expect(emailText('{{ subscription.renews_on }}', renewing('America/Los_Angeles'))).toBe('June 30, 2026');
  });

  it('names the subscriber, the plan’s interval and the subscription’s status in words', () => {
    expect(emailText('{{ subscriber.name }}|{{ plan.interval }}|{{ subscription.status }}')).toBe(
      'Alex|monthly|active',
    );
    const quarterly = (context: MessageContext) => ({
      ...context,
      plan: { ...context.plan!, interval_count: 3 },
      subscription: { ...context.subscription!, status: 'pending_cancellation' as const },
    });
    expect(emailText('{{ plan.interval }}|{{ subscription.status }}', quarterly)).toBe(
      'every 3 months|pending cancellation',
    );
  });

  it('renders a broadcast’s own subject and body as Liquid over the same variables', () => {
    const context = sampleContext('broadcast', project, NOW);
    const rendered = renderMessage(defaultMessageTemplate('broadcast'), 'email', {
      ...context,
      broadcast: {
        subject: 'Live with {{ project.name }}',
        body: 'Hi {{ subscriber.name }} <3\n\nhttps://x.example/live',
      },
    });
    expect(rendered).toEqual({
      subject: 'Live with Night Owls',
      text: 'Hi Alex <3\n\nhttps://x.example/live',
      html: '<p>Hi Alex &lt;3</p>\n<p><a href="https://x.example/live">https://x.example/live</a></p>',
    });
  });
});

describe('validation and sandbox', () => {
  it('refuses an unknown variable, naming the field, the line and the column', () => {
    expect(errorsOf({ email: { subject: 'Hi', body: 'Hello\n  {{ subscriber.email }}' } })).toEqual([
      { path: 'email.body', message: expect.stringMatching(/line 2, column 6: undefined variable: subscriber\.email/) },
    ]);
    expect(errorsOf({ bot: { body: '{{ secret }}' } })).toEqual([
      { path: 'bot.body', message: expect.stringMatching(/line 1, column 4: undefined variable: secret/) },
    ]);
  });

  it('refuses syntax errors and unknown filters, and accepts documented ones', () => {
    const errors = errorsOf({ email: { subject: '{% if %}', body: '{{ project.name | shout }}' } });
    expect(errors.map((error) => error.path)).toEqual(['email.subject', 'email.body']);
    expect(errors[1].message).toMatch(/line 1, column 1: .*shout/);
    expect(errorsOf({ email: { subject: '{{ project.name | upcase }}', body: 'ok' }, bot: { body: 'ok' } })).toEqual(
      [],
    );
  });

  it('has no include, render or layout tag (no file system)', () => {
    for (const tag of ['{% include "x" %}', '{% render "x" %}', '{% layout "x" %}'])
      expect(errorsOf({ bot: { body: tag } })[0].message, tag).toMatch(/line 1, column 1: tag .* not found/);
  });

  it('reaches no prototype, constructor or method', () => {
    for (const body of [
      '{{ project.name.constructor }}',
      '{{ project.constructor.name }}',
      '{{ subscriber.__proto__ }}',
      '{{ links.toString }}',
    ])
      expect(errorsOf({ bot: { body } })[0].message, body).toMatch(/undefined variable/);
  });

  it('stops a template that renders too long', () => {
    const errors = errorsOf({
      bot: { body: '{% for a in (1..100000) %}{% for b in (1..100000) %}x{% endfor %}{% endfor %}' },
    });
    expect(errors[0].message).toMatch(/limit exceeded/);
  });
});

describe('project time zones', () => {
  it('accepts IANA names and refuses offsets and made-up names', () => {
    for (const name of ['UTC', 'Europe/Berlin', 'America/Argentina/Salta', 'Etc/GMT+5'])
      expect(isTimeZone(name), name).toBe(true);
    for (const name of ['+02:00', 'Mars/Olympus', '', 'Europe/Berlin; drop'])
      expect(isTimeZone(name), name).toBe(false);
  });
});
