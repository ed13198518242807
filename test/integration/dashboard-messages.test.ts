/**
 * The dashboard's Messages page without a browser (DESIGN D21, D32): a project's message kinds listed with their
 * state; a kind's form saves through `putMessageTemplate`, shows a refused save's line and column with the texts as
 * typed, previews the texts as typed (as an htmx partial too, a refusal included) and resets to the default; POSTs
 * need the CSRF token.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { MESSAGE_KINDS } from '../../shared/catalogues/message-kinds.js';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { loadMessageTemplate } from '../../shared/domain/message-templates/templates.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { dashboardEvent } from '../support/calls.js';

let runtime: TestRuntime;
let teamId: string;
let projectId: string;
let get: (path: string) => ReturnType<typeof handleDashboardRequest>;
let post: (
  path: string,
  fields: Record<string, string>,
  options?: { csrf?: boolean; headers?: Record<string, string> },
) => ReturnType<typeof handleDashboardRequest>;

const texts = {
  delivery: 'both',
  email_subject: 'News for {{ subscriber.name }}',
  email_body: 'Hello {{ subscriber.name }},\n\nwelcome to {{ project.name }}.',
  bot_body: 'Hi {{ subscriber.name }}!',
};

beforeEach(async () => {
  const clock = testClock();
  runtime = await createTestRuntime({ clock });
  const seeded = await seedTeam(runtime.store, clock);
  teamId = seeded.team.id;
  projectId = (
    await createProject(runtime, seeded.principal, {
      name: 'Night Owls',
      platform_type: 'telegram',
      time_zone: 'Europe/Paris',
    })
  ).id;
  const owner = await ensureTeamOwner(runtime, teamId, { email: `owner-${randomUUID()}@example.com`, name: 'Owner' });
  const { session, cookieValue } = await createSession(runtime.store, clock, {
    teamId,
    memberId: owner.id,
    state: 'active',
    method: 'passkey',
  });
  get = (path) => handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }));
  post = (path, fields, options = {}) =>
    handleDashboardRequest(
      runtime,
      dashboardEvent('POST', path, {
        cookie: cookieValue,
        headers: options.headers,
        form: new URLSearchParams({
          ...(options.csrf === false ? {} : { csrf_token: session.csrf_token }),
          idempotency_key: randomUUID(),
          ...fields,
        }).toString(),
      }),
    );
});

const messages = () => `/dashboard/projects/${projectId}/messages`;

describe('the Messages page', () => {
  it('lists every kind with its state and links each form, under a Messages tab', async () => {
    const page = await get(messages());
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('aria-current="page" class="button">Messages</a>');
    expect(page.body).toContain(
      'name="time_zone" required maxlength="64" placeholder="Europe/Berlin" value="Europe/Paris"',
    );
    for (const label of ['Welcome', 'Payment failed', 'Sign-in link', 'Broadcast'])
      expect(page.body).toContain(`">${label}</a>`);
    expect(page.body).toContain(`href="${messages()}/payment_failed"`);
    expect(page.body.match(/>default</g)).toHaveLength(MESSAGE_KINDS.length);
  });

  it('saves a template, shows a refused save’s line and column with the texts kept, and resets it', async () => {
    const form = await get(`${messages()}/welcome`);
    expect(form.body).toContain('The service’s default text.');
    expect(form.body).toContain('Welcome to {{ project.name }}');

    const saved = await post(`${messages()}/welcome`, texts);
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('The template is saved.');
    expect(await loadMessageTemplate(runtime, teamId, projectId, 'welcome')).toMatchObject({
      delivery: 'both',
      email: { subject: texts.email_subject, body: texts.email_body },
      is_default: false,
    });
    expect((await get(messages())).body).toContain('customized');

    const refused = await post(`${messages()}/welcome`, { ...texts, email_body: 'Hi\n{{ subscriber.age }}' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('email.body');
    expect(refused.body).toContain('line 2, column 4: undefined variable: subscriber.age');
    expect(refused.body).toContain('{{ subscriber.age }}</textarea>');

    const reset = await post(`${messages()}/welcome/reset`, {});
    expect(reset.body).toContain('The template is back to the default.');
    expect(await loadMessageTemplate(runtime, teamId, projectId, 'welcome')).toMatchObject({ is_default: true });
  });

  it('previews the texts as typed, as a page and as an htmx partial, refusals inside the preview', async () => {
    const preview = await post(`${messages()}/welcome/preview`, texts);
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain('<span id="preview-subject">News for Alex</span>');
    expect(preview.body).toContain('welcome to Night Owls.');
    expect(await loadMessageTemplate(runtime, teamId, projectId, 'welcome')).toMatchObject({ is_default: true });

    const htmx = await post(
      `${messages()}/welcome/preview`,
      { ...texts, bot_body: '{{ nope' },
      { headers: { 'hx-request': 'true' } },
    );
    expect(htmx.statusCode).toBe(200);
    const section = htmx.body.slice(htmx.body.indexOf('<section id="message-preview"'));
    expect(section).toContain('bot.body');
    expect(section).toMatch(/Liquid error at line 1, column \d+/);
  });

  it('saves the project’s time zone, and shows a refused one', async () => {
    const saved = await post(`${messages()}/time-zone`, { time_zone: 'Asia/Tokyo' });
    expect(saved.body).toContain('The time zone is saved.');
    expect(saved.body).toContain('value="Asia/Tokyo"');
    const refused = await post(`${messages()}/time-zone`, { time_zone: 'Mars/Base' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('Expected an IANA time zone name');
    expect((await get(messages())).body).toContain('value="Asia/Tokyo"');
  });

  it('refuses POSTs without the CSRF token, changing nothing', async () => {
    for (const path of [`${messages()}/welcome`, `${messages()}/welcome/reset`, `${messages()}/time-zone`]) {
      const refused = await post(path, texts, { csrf: false });
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain('CSRF_TOKEN_INVALID');
    }
    expect(await loadMessageTemplate(runtime, teamId, projectId, 'welcome')).toMatchObject({ is_default: true });
  });
});
