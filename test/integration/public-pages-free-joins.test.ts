/**
 * Free joins confirmed by e-mail (DESIGN D26, D15, D20) against DynamoDB Local: an anonymous free join makes an
 * incomplete subscription that grants nothing and a subscriber that does not count against the tier; its welcome page
 * says "Check your inbox"; the e-mailed one-time link activates it (events as for any activation) and counts the
 * subscriber. A bot's 100 joins from three IPs use up no quota (past the project's limit: 429 with Retry-After) and a
 * fan who confirms still gets in; the same address joining twice re-sends, never duplicates; an unconfirmed join
 * expires with its link.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { CreatePlanRequest } from '../../shared/domain/plans/schema.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { listSubscriptions } from '../../shared/domain/subscriptions/queries.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import { rest } from '../support/calls.js';
import { seedTeam } from '../support/store.js';
import {
  clock,
  confirmationPathOf,
  deliverMessages,
  joinFreePlanByEmail,
  openJoinPage,
  plan,
  projectId,
  runtime,
  serve,
  team,
  usePublicPagesFixture,
} from '../support/fixtures/public-pages.js';
import { HOUR_MS } from '../../shared/clock.js';

usePublicPagesFixture();

/** Posts a free join of `email` to `planId` of `project` with a join page's cookie and token. */
async function postJoin(
  form: { cookies: string[]; csrf: string },
  project: string,
  planId: string,
  email: string,
  ip?: string,
) {
  return serve('POST', `/join/${project}/plans/${planId}`, {
    cookies: form.cookies,
    form: { csrf_token: form.csrf, idempotency_key: randomUUID(), email },
    ip,
  });
}

/** The types of the fixture team's events (`GET /v1/events`). */
async function eventTypes(): Promise<string[]> {
  const reply = await rest(runtime, { method: 'GET', path: '/v1/events', token: team.token, query: { limit: '100' } });
  expect(reply.status, reply.text).toBe(200);
  return (reply.json as { data: { type: string }[] }).data.map((event) => event.type);
}

describe('a free join', () => {
  it('waits for its address: incomplete, no access, "Check your inbox"; the e-mailed link activates it once', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const form = await openJoinPage();
    const joined = await postJoin(form, projectId, free.id, 'fan@example.com');
    expect(joined.statusCode).toBe(303);
    const [waiting] = (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data;
    expect(waiting).toMatchObject({ status: 'incomplete', has_access: false, source: 'free_plan' });

    const welcome = await serve('GET', joined.headers.Location);
    expect(welcome.statusCode).toBe(200);
    expect(welcome.body).toContain('Check your inbox');
    expect(welcome.body).not.toContain('on its way');
    expect(welcome.body).not.toContain('hx-trigger');
    expect(welcome.body).not.toContain('Manage your membership');

    const [mail] = await deliverMessages();
    expect(mail.to).toBe('fan@example.com');
    expect(mail.subject).toBe('Confirm your e-mail address to join Book <club>');
    expect(mail.headers?.['List-Unsubscribe']).toBeUndefined();
    const path = confirmationPathOf(mail)!;
    const confirmed = await serve('GET', path);
    expect(confirmed.statusCode).toBe(303);
    expect(confirmed.headers.Location).toContain(`subscription=${waiting.id}`);
    const active = await serve('GET', confirmed.headers.Location);
    expect(active.body).toContain('Active');
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data[0]).toMatchObject({
      id: waiting.id,
      status: 'active',
      has_access: true,
      previous_status: 'incomplete',
    });
    expect(await eventTypes()).toEqual(expect.arrayContaining(['subscription.created', 'subscription.activated']));

    // The link works once; the page that said "Check your inbox" still shows nothing of the membership.
    const again = await serve('GET', path);
    expect(again.statusCode).toBe(404);
    expect(again.body).toContain('This confirmation link cannot be used');
    expect((await serve('GET', joined.headers.Location)).body).not.toContain('Active');
    expect((await serve('GET', `/join/${projectId}/confirm?token=pjc_${'A'.repeat(44)}`)).statusCode).toBe(404);
  });

  it('joined twice by the same address re-sends the link and makes nothing twice; an address already in gets a sign-in link', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const form = await openJoinPage();
    const first = await postJoin(form, projectId, free.id, 'twice@example.com');
    const second = await postJoin(form, projectId, free.id, 'Twice@Example.com');
    expect([first.statusCode, second.statusCode]).toEqual([303, 303]);
    expect((await deliverMessages()).map((mail) => mail.to)).toEqual(['twice@example.com']);
    clock.advance(15 * 60_000);
    await postJoin(form, projectId, free.id, 'twice@example.com');
    const [resent] = await deliverMessages();
    expect(confirmationPathOf(resent)).toBeDefined();
    const subscriptions = (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data;
    expect(subscriptions).toHaveLength(1);
    const subscribers = await rest(runtime, {
      method: 'GET',
      path: `/v1/projects/${projectId}/subscribers`,
      token: team.token,
    });
    expect((subscribers.json as { data: unknown[] }).data).toHaveLength(1);

    expect((await serve('GET', confirmationPathOf(resent)!)).statusCode).toBe(303);
    clock.advance(15 * 60_000);
    const member = await postJoin(form, projectId, free.id, 'twice@example.com');
    expect(member.statusCode).toBe(303);
    expect((await serve('GET', member.headers.Location)).body).toContain('Check your inbox');
    const [signIn] = await deliverMessages();
    expect(signIn.text).toMatch(/\/portal\/[0-9a-f-]{36}\/sign-in\?token=ppl_/);
    expect((await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data).toHaveLength(1);
  });

  it('expires unconfirmed after 23 hours with its link; joining again starts over for the same subscriber', async () => {
    const free = await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const form = await openJoinPage();
    await postJoin(form, projectId, free.id, 'late@example.com');
    const path = confirmationPathOf((await deliverMessages())[0])!;
    clock.advance(23 * HOUR_MS + 60_000);
    await applyDueDeadlines(runtime, clock.nowMs());
    const [expired] = (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data;
    expect(expired).toMatchObject({ status: 'incomplete_expired', has_access: false });
    expect((await serve('GET', path)).statusCode).toBe(404);
    expect(await eventTypes()).toContain('subscription.incomplete_expired');

    await postJoin(form, projectId, free.id, 'late@example.com');
    const fresh = (await listSubscriptions(runtime.store, team.principal, projectId, { limit: 10 })).data;
    expect(fresh.map((subscription) => subscription.status)).toEqual(['incomplete_expired', 'incomplete']);
    expect(new Set(fresh.map((subscription) => subscription.subscriber_id)).size).toBe(1);
  });
});

describe('a bot on the join page', () => {
  it('100 anonymous free joins from three IPs use up no quota (429 past the project’s limit); a fan who confirms still gets in', async () => {
    const owner = await seedTeam(runtime.store, clock, ABILITY_VALUES, 'free');
    const project = await createProject(runtime, owner.principal, { name: 'Small club', platform_type: 'web' });
    const free = await createPlan(
      runtime,
      owner.principal,
      project.id,
      CreatePlanRequest.parse({ name: 'Free', amount: 0, currency: 'EUR', interval: 'month' }),
    );
    const ips = ['198.51.100.1', '198.51.100.2', '198.51.100.3'];
    const forms = await Promise.all(
      ips.map(async (ip) => {
        const page = await serve('GET', `/join/${project.id}`, { ip });
        const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1];
        return { cookies: [page.cookies![0].split(';')[0]], csrf };
      }),
    );
    const statuses: number[] = [];
    for (let index = 0; index < 100; index++) {
      const answer = await postJoin(forms[index % 3], project.id, free.id, `bot-${index}@example.net`, ips[index % 3]);
      statuses.push(answer.statusCode);
      if (answer.statusCode === 429) expect(answer.headers['Retry-After']).toMatch(/^\d+$/);
    }
    const { limit } = RATE_LIMITS['free-joins'];
    expect(statuses.filter((status) => status === 303)).toHaveLength(limit);
    expect(statuses.filter((status) => status === 429)).toHaveLength(100 - limit);
    runtime.messageSends.splice(0);
    const billing = async () =>
      (await rest(runtime, { method: 'GET', path: '/v1/billing', token: owner.token })).json as {
        usage: { subscribers: number };
      };
    expect((await billing()).usage.subscribers).toBe(0);
    const joins = (await listSubscriptions(runtime.store, owner.principal, project.id, { limit: 100 })).data;
    expect(joins.every((subscription) => subscription.status === 'incomplete' && !subscription.has_access)).toBe(true);

    clock.advance(HOUR_MS);
    const { confirmed } = await joinFreePlanByEmail(free.id, 'fan@example.com', { projectId: project.id });
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    expect((await serve('GET', confirmed.headers.Location)).body).toContain('Active');
    expect((await billing()).usage.subscribers).toBe(1);
  });
});
