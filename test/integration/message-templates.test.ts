/**
 * Message templates over REST (DESIGN D32): every kind listed with its default until one is saved; a save is checked
 * by rendering (an unknown variable or a syntax error is VALIDATION_FAILED naming the field, line and column) and read
 * back; DELETE brings the default back; a preview renders the given, saved or default texts for a sample or a real
 * subscriber; a project's time zone is set and shapes the dates; another team's project is NOT_FOUND alike.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { MESSAGE_KIND_VALUES } from '../../shared/catalogues/message-kinds.js';
import { loadMessageTemplate } from '../../shared/domain/message-templates/templates.js';
import { couponStore } from '../../shared/store/coupons.js';
import { messageTemplateStore } from '../../shared/store/message-templates.js';
import { expectRestProblem } from '../support/guarantees.js';
import { caller } from '../support/calls.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';

let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;

const { call, ok } = caller(() => ({ runtime, token: team.token }));
const templatesOf = (id: string) => `/v1/projects/${id}/message-templates`;
const saved = {
  delivery: 'both',
  email: { subject: 'Hello from {{ project.name }}', body: 'Hi {{ subscriber.name }}!\n\nSee {{ links.portal }}' },
  bot: { body: 'Hi {{ subscriber.name }}, welcome to {{ project.name }}.' },
};

beforeEach(async () => {
  const clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Night Owls', platform_type: 'telegram' }, 201)).id;
});

describe('reading and saving', () => {
  it('lists every kind with its default, then the saved one; GET reads one; DELETE restores the default', async () => {
    const listed = await ok('GET', templatesOf(projectId));
    expect(listed.data.map((template: { kind: string }) => template.kind)).toEqual([...MESSAGE_KIND_VALUES]);
    expect(listed.data.every((template: { is_default: boolean }) => template.is_default)).toBe(true);

    const put = await ok('PUT', `${templatesOf(projectId)}/welcome`, saved);
    expect(put).toEqual({ kind: 'welcome', ...saved, is_default: false, updated_at: expect.any(String) });
    expect(await ok('GET', `${templatesOf(projectId)}/welcome`)).toEqual(put);
    expect(await loadMessageTemplate(runtime, team.team.id, projectId, 'welcome')).toEqual(put);
    const after = await ok('GET', templatesOf(projectId));
    expect(after.data.filter((template: { is_default: boolean }) => !template.is_default)).toEqual([put]);

    const reset = await ok('DELETE', `${templatesOf(projectId)}/welcome`);
    expect(reset).toMatchObject({ kind: 'welcome', is_default: true, updated_at: null, delivery: 'preferred' });
    expect(await ok('GET', `${templatesOf(projectId)}/welcome`)).toEqual(reset);
  });

  it('deleting the project deletes its saved templates and its coupons with their codes', async () => {
    await ok('PUT', `${templatesOf(projectId)}/welcome`, saved);
    await ok('PUT', `${templatesOf(projectId)}/payment_failed`, saved);
    const coupon = await ok(
      'POST',
      `/v1/projects/${projectId}/coupons`,
      { name: 'Launch', percent_off: 10, duration: 'once', promotion_codes: [{ code: 'LAUNCH10' }] },
      201,
    );
    const other = (await ok('POST', '/v1/projects', { name: 'Kept', platform_type: 'telegram' }, 201)).id;
    await ok('PUT', `${templatesOf(other)}/welcome`, saved);

    await ok('DELETE', `/v1/projects/${projectId}`);
    expect(await messageTemplateStore.readMany(runtime.store, team.team.id, projectId, MESSAGE_KIND_VALUES)).toEqual(
      [],
    );
    expect(await couponStore.read(runtime.store, team.team.id, projectId, coupon.id)).toBeUndefined();
    expect(await couponStore.readCode(runtime.store, team.team.id, projectId, 'LAUNCH10')).toBeUndefined();
    expect(await loadMessageTemplate(runtime, team.team.id, other, 'welcome')).toMatchObject({ is_default: false });
  });

  it('refuses a template that does not render, naming the field, line and column; nothing is saved', async () => {
    const refused = await call('PUT', `${templatesOf(projectId)}/payment_failed`, {
      ...saved,
      email: { subject: 'Paid?', body: 'Hi\n{{ subscriber.password }}' },
      bot: { body: '{% if %}' },
    });
    const problem = expectRestProblem(refused, 'VALIDATION_FAILED');
    expect(problem.errors).toEqual([
      {
        path: 'email.body',
        message: expect.stringMatching(/line 2, column 4: undefined variable: subscriber\.password/),
      },
      { path: 'bot.body', message: expect.stringMatching(/^Liquid error at line 1, column 6: /) },
    ]);
    expect(await ok('GET', `${templatesOf(projectId)}/payment_failed`)).toMatchObject({ is_default: true });
  });

  it('refuses unknown kinds, oversized texts and missing fields by schema', async () => {
    expectRestProblem(await call('PUT', `${templatesOf(projectId)}/birthday`, saved), 'VALIDATION_FAILED');
    const long = { ...saved, email: { subject: 'x'.repeat(201), body: 'y'.repeat(10_001) } };
    const problem = expectRestProblem(
      await call('PUT', `${templatesOf(projectId)}/welcome`, long),
      'VALIDATION_FAILED',
    );
    expect(problem.errors?.map((error) => error.path).sort()).toEqual(['body.email.body', 'body.email.subject']);
    expectRestProblem(
      await call('PUT', `${templatesOf(projectId)}/welcome`, { delivery: 'both' }),
      'VALIDATION_FAILED',
    );
  });
});

describe('preview', () => {
  it('renders the default for a sample subscriber and the project’s plan', async () => {
    await ok(
      'POST',
      `/v1/projects/${projectId}/plans`,
      { name: 'Gold', amount: 1500, currency: 'JPY', interval: 'month' },
      201,
    );
    const preview = await ok('POST', `${templatesOf(projectId)}/welcome/preview`, {});
    expect(preview).toMatchObject({ kind: 'welcome', subscriber_id: null });
    expect(preview.email.subject).toBe('Welcome to Night Owls');
    expect(preview.email.text).toContain('Your Gold membership (¥1,500, monthly) is active.');
    expect(preview.email.html).toContain('<p>Hi Alex,</p>');
    expect(preview.bot.text).toContain('Welcome to Night Owls, Alex!');
  });

  it('renders given texts for a real subscriber, in the project’s time zone, and refuses bad ones', async () => {
    await ok('POST', `/v1/projects/${projectId}`, { time_zone: 'Asia/Tokyo' });
    const subscriber = await ok(
      'POST',
      `/v1/projects/${projectId}/subscribers`,
      { display_name: 'Mina', platform_user_id: '77' },
      201,
    );
    const preview = await ok('POST', `${templatesOf(projectId)}/welcome/preview`, {
      subscriber_id: subscriber.id,
      email: { subject: 'For {{ subscriber.name }}', body: '<b>{{ subscriber.name }}</b> {{ grace.ends_on }}' },
    });
    expect(preview.subscriber_id).toBe(subscriber.id);
    expect(preview.email.subject).toBe('For Mina');
    expect(preview.email.html).toMatch(/^<p>&lt;b&gt;Mina&lt;\/b&gt; \w+ \d+, \d{4}<\/p>$/);
    const refused = await call('POST', `${templatesOf(projectId)}/welcome/preview`, { bot: { body: '{{ nope }}' } });
    expect(expectRestProblem(refused, 'VALIDATION_FAILED').errors?.[0].path).toBe('bot.body');
    const stranger = '00000000-0000-4000-8000-000000000001';
    expectRestProblem(
      await call('POST', `${templatesOf(projectId)}/welcome/preview`, { subscriber_id: stranger }),
      'NOT_FOUND',
    );
  });
});

describe('project time zone', () => {
  it('defaults to UTC, is set on create and update, and refuses what is not an IANA name', async () => {
    expect(await ok('GET', `/v1/projects/${projectId}`)).toMatchObject({ time_zone: 'UTC' });
    const berlin = await ok(
      'POST',
      '/v1/projects',
      { name: 'B', platform_type: 'telegram', time_zone: 'Europe/Berlin' },
      201,
    );
    expect(berlin.time_zone).toBe('Europe/Berlin');
    expect(await ok('POST', `/v1/projects/${projectId}`, { time_zone: 'America/New_York' })).toMatchObject({
      time_zone: 'America/New_York',
    });
    const problem = expectRestProblem(
      await call('POST', `/v1/projects/${projectId}`, { time_zone: 'Mars/Base' }),
      'VALIDATION_FAILED',
    );
    expect(problem.errors?.[0].path).toBe('body.time_zone');
  });
});

describe('access', () => {
  it('answers NOT_FOUND for another team’s project, and needs the abilities', async () => {
    const other = await seedTeam(runtime.store, testClock());
    const foreign = (
      await caller(() => ({ runtime, token: other.token })).ok(
        'POST',
        '/v1/projects',
        { name: 'Theirs', platform_type: 'telegram' },
        201,
      )
    ).id;
    for (const [method, path, body] of [
      ['GET', templatesOf(foreign), undefined],
      ['GET', `${templatesOf(foreign)}/welcome`, undefined],
      ['PUT', `${templatesOf(foreign)}/welcome`, saved],
      ['DELETE', `${templatesOf(foreign)}/welcome`, undefined],
      ['POST', `${templatesOf(foreign)}/welcome/preview`, {}],
    ] as const)
      expectRestProblem(await call(method, path, body), 'NOT_FOUND');

    const viewer = await seedToken(runtime.store, testClock(), {
      teamId: team.team.id,
      abilities: ['project:view'],
    });
    expect((await call('GET', templatesOf(projectId), undefined, { token: viewer.token })).status).toBe(200);
    expectRestProblem(
      await call('PUT', `${templatesOf(projectId)}/welcome`, saved, { token: viewer.token }),
      'TOKEN_MISSING_ABILITY',
    );
  });
});
