/**
 * Subscribers (DESIGN D10, D14, D17, D22): create, read by id alone, list per project
 * (status, plan and e-mail prefix filters, paging, no contact data), update, export (NDJSON pages), and
 * ban / unban / kick through the platform adapter (`web`; failing adapters injected at the use case),
 * with the `member.*` events they emit read from the outbox and checked against their published JSON
 * Schema. Every operation over REST; the four subscriber tools over the tool server. Against DynamoDB
 * Local, with an injected clock.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { createSubscription } from '../../shared/domain/subscriptions/creation.js';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { tool } from '../support/calls.js';
import { seedToken } from '../support/store.js';
import {
  call,
  clock,
  createSubscriberOk,
  joined,
  newEvents,
  projectId,
  runtime,
  team,
  types,
  useSubscribersFixture,
} from '../support/fixtures/subscribers.js';

useSubscribersFixture();

describe('create and read', () => {
  it('creates a subscriber over REST and reads it by id alone over REST and get_subscriber, with consented contact data', async () => {
    const subscriber = await createSubscriberOk();
    expect(subscriber).toEqual({
      id: expect.any(String),
      project_id: projectId,
      display_name: 'Ada Lovelace',
      platform_user_id: 'web-ada',
      email: 'Ada@Example.com',
      phone: '+44 20 7946 0000',
      consent: true,
      provider_customer_id: null,
      member_id: null,
      status: 'active',
      banned_at: null,
      created_at: subscriber.created_at,
      updated_at: subscriber.created_at,
    });
    expect((await call('GET', `/v1/subscribers/${subscriber.id}`)).json).toEqual(subscriber);
    const viaTool = await tool(runtime, team.principal, 'get_subscriber', { id: subscriber.id });
    expect(viaTool.isError).toBeFalsy();
    expect(viaTool.structuredContent).toEqual(subscriber);
    expect(types(await newEvents())).toEqual([]);
  });

  it('shows no e-mail or phone without consent, nor to a caller without project-user:view', async () => {
    const silent = await createSubscriberOk({ display_name: 'Quiet', email: 'quiet@example.com', phone: '+15550100' });
    expect(silent).not.toHaveProperty('email');
    expect(silent).not.toHaveProperty('phone');
    expect(silent.consent).toBe(false);
    const consented = await createSubscriberOk({ email: 'open@example.com', consent: true });
    const noView = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-user:update', 'project-user:view-any', 'mcp:full'],
    });
    const created = await call(
      'POST',
      `/v1/projects/${projectId}/subscribers`,
      { email: 'other@example.com', consent: true },
      { token: noView.token },
    );
    expect(created.status).toBe(201);
    expect(created.json).not.toHaveProperty('email');
    expectRestProblem(
      await call('GET', `/v1/subscribers/${consented.id}`, undefined, { token: noView.token }),
      'TOKEN_MISSING_ABILITY',
    );
    // Consent given later shows the stored data.
    const updated = await call('POST', `/v1/subscribers/${silent.id}`, { consent: true });
    expect(updated.json).toMatchObject({ email: 'quiet@example.com', phone: '+15550100', consent: true });
  });

  it('refuses unknown fields, bad values and a platform user id another subscriber holds, writing nothing', async () => {
    await createSubscriberOk();
    const before = await domainSnapshot(runtime.store);
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'X', card_number: '4242' }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscribers`, { email: 'not-an-email' }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/subscribers`, {
        display_name: 'Twin',
        platform_user_id: 'web-ada',
      }),
      'CONFLICT',
    );
    expectRestProblem(
      await call('POST', `/v1/projects/${randomUUID()}/subscribers`, { display_name: 'Lost' }),
      'NOT_FOUND',
    );
    expectRestProblem(await call('GET', `/v1/subscribers/${randomUUID()}`), 'NOT_FOUND');
    expectToolProblem(
      await tool(runtime, team.principal, 'get_subscriber', { id: randomUUID(), extra: 1 }),
      'VALIDATION_FAILED',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('keeps a project-scoped token to its project', async () => {
    const other = (await call('POST', '/v1/projects', { name: 'Other', platform_type: 'web' })).json.id;
    const subscriber = await createSubscriberOk();
    const scoped = await seedToken(runtime.store, clock, { teamId: team.team.id, projectIds: [other] });
    expectRestProblem(
      await call('GET', `/v1/subscribers/${subscriber.id}`, undefined, { token: scoped.token }),
      'NOT_FOUND',
    );
    expectToolProblem(await tool(runtime, scoped.principal, 'ban_subscriber', { id: subscriber.id }), 'NOT_FOUND');
    expectToolProblem(
      await tool(runtime, scoped.principal, 'list_subscribers', { project_id: projectId }),
      'NOT_FOUND',
    );
  });
});

describe('list and export', () => {
  it('lists without contact data over REST and list_subscribers, filtered by status, plan and e-mail prefix, paged', async () => {
    const a = await createSubscriberOk();
    const b = await createSubscriberOk({ display_name: 'Bob', email: 'bob@example.com', consent: true });
    const c = await createSubscriberOk({ display_name: 'Adam', email: 'adam@example.org' });
    const all = await call('GET', `/v1/projects/${projectId}/subscribers`);
    expect(all.status).toBe(200);
    expect(all.json.data.map((s: { id: string }) => s.id).sort()).toEqual([a.id, b.id, c.id].sort());
    for (const item of all.json.data) {
      expect(item).not.toHaveProperty('email');
      expect(item).not.toHaveProperty('phone');
    }
    const prefixed = await tool(runtime, team.principal, 'list_subscribers', {
      project_id: projectId,
      email_prefix: 'AD',
    });
    expect(prefixed.isError).toBeFalsy();
    expect((prefixed.structuredContent.data as { id: string }[]).map((s) => s.id).sort()).toEqual([a.id, c.id].sort());

    // The subscriptions use cases keep the subscriber's live plan counters in their transactions.
    const planId = (
      await createPlan(runtime, team.principal, projectId, {
        name: 'Gold',
        amount: 500,
        currency: 'USD',
        interval: 'month',
      })
    ).id;
    await createSubscription(runtime, team.principal, projectId, { subscriber_id: b.id, plan_id: planId });
    const byPlan = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, {
      token: team.token,
      query: { plan_id: planId },
    });
    expect(byPlan.json.data.map((s: { id: string }) => s.id)).toEqual([b.id]);

    await call('POST', `/v1/subscribers/${c.id}/ban`, {});
    const banned = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, {
      token: team.token,
      query: { status: 'banned' },
    });
    expect(banned.json.data.map((s: { id: string }) => s.id)).toEqual([c.id]);

    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, {
        token: team.token,
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
      });
      expect(page.json.data.length).toBeLessThanOrEqual(2);
      ids.push(...page.json.data.map((s: { id: string }) => s.id));
      cursor = page.json.next_cursor ?? undefined;
    } while (cursor);
    expect(ids.sort()).toEqual([a.id, b.id, c.id].sort());

    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, {
        token: team.token,
        query: { search: 'x' },
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, {
        token: team.token,
        query: { cursor: 'bm90LWEtY3Vyc29y' },
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(await call('GET', `/v1/projects/${randomUUID()}/subscribers`), 'NOT_FOUND');
  });

  it('exports NDJSON pages, with consented contact data only for callers holding project-user:view', async () => {
    const a = await createSubscriberOk();
    const b = await createSubscriberOk({ display_name: 'Bob', email: 'bob@example.com' });
    const c = await createSubscriberOk({ display_name: 'Cy', email: 'cy@example.com', consent: true });
    const lines: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    do {
      const page = await call('GET', `/v1/projects/${projectId}/subscribers/export`, undefined, {
        token: team.token,
        query: { limit: '2', ...(cursor ? { cursor } : {}) },
      });
      expect(page.status, page.text).toBe(200);
      expect(page.json.lines === '' || page.json.lines.endsWith('\n')).toBe(true);
      const parsed = page.json.lines
        .split('\n')
        .filter(Boolean)
        .map((line: string) => JSON.parse(line));
      expect(parsed).toHaveLength(page.json.count);
      lines.push(...parsed);
      cursor = page.json.next_cursor ?? undefined;
    } while (cursor);
    const byId = new Map(lines.map((line) => [line.id, line]));
    expect([...byId.keys()].sort()).toEqual([a.id, b.id, c.id].sort());
    expect(byId.get(a.id)).toMatchObject({ email: 'Ada@Example.com' });
    expect(byId.get(b.id)).not.toHaveProperty('email');
    expect(byId.get(c.id)).toMatchObject({ email: 'cy@example.com' });

    const exportOnly = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-user:export'],
    });
    const blind = await call('GET', `/v1/projects/${projectId}/subscribers/export`, undefined, {
      token: exportOnly.token,
    });
    expect(blind.status).toBe(200);
    expect(blind.json.lines).not.toContain('@');
    expectRestProblem(
      await call('GET', `/v1/projects/${projectId}/subscribers/export`, undefined, {
        token: team.token,
        query: { limit: '5000' },
      }),
      'VALIDATION_FAILED',
    );
  });
});

describe('update', () => {
  it('changes name, contact data and consent; a request that changes nothing writes nothing', async () => {
    const subscriber = await createSubscriberOk();
    clock.advance(1_000);
    const updated = await call('POST', `/v1/subscribers/${subscriber.id}`, {
      display_name: 'Countess',
      email: null,
      provider_customer_id: 'cus_123',
    });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.json).toMatchObject({
      display_name: 'Countess',
      email: null,
      phone: '+44 20 7946 0000',
      provider_customer_id: 'cus_123',
    });
    expect(updated.json.updated_at).not.toBe(subscriber.updated_at);
    const prefixed = await call('GET', `/v1/projects/${projectId}/subscribers`, undefined, {
      token: team.token,
      query: { email_prefix: 'ada' },
    });
    expect(prefixed.json.data).toEqual([]);
    const before = await domainSnapshot(runtime.store);
    const same = await call('POST', `/v1/subscribers/${subscriber.id}`, { display_name: 'Countess' });
    expect(same.json).toEqual(updated.json);
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expectRestProblem(await call('POST', `/v1/subscribers/${subscriber.id}`, { nickname: 'x' }), 'VALIDATION_FAILED');
    expectRestProblem(await call('POST', `/v1/subscribers/${randomUUID()}`, { display_name: 'x' }), 'NOT_FOUND');
    expect(types(await newEvents())).toEqual([]);
  });

  it('moves the platform user id: unlinks the old member, links the new one (member.updated each), refuses one held by another subscriber', async () => {
    const oldMember = await joined('web-ada', 'ada');
    const newMember = await joined('web-ada-2', 'ada2');
    await newEvents();
    const subscriber = await createSubscriberOk();
    expect(subscriber.member_id).toBe(oldMember!.id);
    const linkEvents = await newEvents();
    expect(types(linkEvents)).toEqual(['member.updated']);
    expect(linkEvents[0].data).toMatchObject({
      member: { id: oldMember!.id, subscriber_id: subscriber.id },
      subscriber: { id: subscriber.id, member_id: oldMember!.id },
    });

    const other = await createSubscriberOk({ display_name: 'Other', platform_user_id: 'web-other' });
    expectRestProblem(await call('POST', `/v1/subscribers/${other.id}`, { platform_user_id: 'web-ada' }), 'CONFLICT');

    const moved = await call('POST', `/v1/subscribers/${subscriber.id}`, { platform_user_id: 'web-ada-2' });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.json).toMatchObject({ platform_user_id: 'web-ada-2', member_id: newMember!.id });
    const events = await newEvents();
    expect(types(events)).toEqual(['member.updated', 'member.updated']);
    expect(events[0].data).toMatchObject({ member: { id: oldMember!.id, subscriber_id: null }, subscriber: null });
    expect(events[1].data).toMatchObject({ member: { id: newMember!.id, subscriber_id: subscriber.id } });
    expect((await call('GET', `/v1/members/${oldMember!.id}`)).json.subscriber_id).toBeNull();

    // The freed platform user id can be taken by another subscriber.
    const taken = await call('POST', `/v1/subscribers/${other.id}`, { platform_user_id: 'web-ada' });
    expect(taken.json).toMatchObject({ platform_user_id: 'web-ada', member_id: oldMember!.id });
    // A profile change of a subscriber with a member emits member.updated.
    await newEvents();
    await call('POST', `/v1/subscribers/${subscriber.id}`, { display_name: 'Ada L.' });
    expect(types(await newEvents())).toEqual(['member.updated']);
  });
});
