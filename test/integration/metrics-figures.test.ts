/**
 * Metrics (DESIGN D14, D26) against DynamoDB Local: `GET /v1/projects/{project_id}/metrics` and
 * `GET /v1/metrics` answer from counters and daily rollups written in the transactions of the changes
 * they count — the gauges, MRR, the last 30 days and the 90-day series after creations, transitions,
 * payments and refunds; money null for a counts-only token; a project-scoped token; another team's
 * project answered like no project. A property test drives randomized sequences of creations,
 * transitions, payments, refunds and days passing (the clock's deadlines applied) through the operations,
 * then holds every figure to a recount made here from the subscriptions and payments themselves: their
 * final state (gauges, MRR) and the states the events carried at each change (days, 30-day window).
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { METRICS_SERIES_DAYS } from '../../shared/domain/metrics/schema.js';
import { expectRestProblem } from '../support/guarantees.js';
import { seedTeam, seedToken } from '../support/store.js';
import { call, clock, newProject, ok, runtime, team, useMetricsFixture } from '../support/fixtures/metrics.js';
import { DAY_MS } from '../../shared/clock.js';

useMetricsFixture();

const today = () => new Date(clock.nowMs()).toISOString().slice(0, 10);

describe('the figures', () => {
  it('count creations, transitions, payments and refunds per project and for the team, with MRR per currency normalised to a month', async () => {
    const books = await newProject('Books');
    const films = await newProject('Films');
    const empty = await ok('GET', `/v1/projects/${books.id}/metrics`);
    expect(empty).toMatchObject({
      object: 'metrics',
      project_id: books.id,
      subscriptions: { active: 0, trialing: 0, past_due: 0 },
      mrr: [],
      last_30_days: { new: 0, churned: 0, revenue: [], refunds: [], failed_payments: 0 },
    });
    expect(empty.daily).toHaveLength(METRICS_SERIES_DAYS);
    expect(empty.daily.at(-1)).toEqual({ date: today(), active: 0, revenue: [] });

    // Books: a paid monthly subscription (900 EUR), a creator's trial grant (no MRR), a failed first payment.
    const paid = await ok(
      'POST',
      `/v1/projects/${books.id}/payments`,
      { subscriber_id: await books.subscriber('Ada'), plan_id: books.gold, status: 'succeeded' },
      201,
    );
    await ok(
      'POST',
      `/v1/projects/${books.id}/subscriptions`,
      { subscriber_id: await books.subscriber('Bo'), plan_id: books.gold, trial: true },
      201,
    );
    await ok(
      'POST',
      `/v1/projects/${books.id}/payments`,
      { subscriber_id: await books.subscriber('Cy'), plan_id: books.gold, status: 'failed' },
      201,
    );
    // Films: a paid fortnightly subscription (1200 USD per two weeks = 2600 a month), the next day.
    clock.advance(DAY_MS);
    await ok(
      'POST',
      `/v1/projects/${films.id}/payments`,
      { subscriber_id: await films.subscriber('Di'), plan_id: films.fortnight, status: 'succeeded' },
      201,
    );
    // A partial refund of the Books payment, and its cancellation at the period's end (still active).
    await ok('POST', `/v1/payments/${paid.id}/refund`, { amount: 300 });
    await ok('POST', `/v1/subscriptions/${paid.subscription_id}/cancel`, {});

    const bookFigures = await ok('GET', `/v1/projects/${books.id}/metrics`);
    expect(bookFigures).toMatchObject({
      project_id: books.id,
      subscriptions: { active: 1, trialing: 1, past_due: 0 },
      mrr: [{ currency: 'EUR', amount: 900 }],
      last_30_days: {
        new: 2,
        churned: 0,
        revenue: [{ currency: 'EUR', amount: 900 }],
        refunds: [{ currency: 'EUR', amount: 300 }],
        failed_payments: 1,
      },
    });
    expect(bookFigures.daily.slice(-2)).toEqual([
      {
        date: new Date(clock.nowMs() - DAY_MS).toISOString().slice(0, 10),
        active: 1,
        revenue: [{ currency: 'EUR', amount: 900 }],
      },
      { date: today(), active: 1, revenue: [] },
    ]);

    const teamFigures = await ok('GET', '/v1/metrics');
    expect(teamFigures).toMatchObject({
      project_id: null,
      subscriptions: { active: 2, trialing: 1, past_due: 0 },
      mrr: [
        { currency: 'EUR', amount: 900 },
        { currency: 'USD', amount: 2600 },
      ],
      last_30_days: {
        new: 3,
        churned: 0,
        revenue: [
          { currency: 'EUR', amount: 900 },
          { currency: 'USD', amount: 1200 },
        ],
        refunds: [{ currency: 'EUR', amount: 300 }],
        failed_payments: 1,
      },
    });
    expect(teamFigures.daily.slice(-2).map((day: { active: number }) => day.active)).toEqual([1, 2]);

    // Cancelled at once: churned today, out of active and MRR; yesterday's series keeps it.
    await ok('POST', `/v1/subscriptions/${paid.subscription_id}/cancel`, { at_period_end: false });
    const after = await ok('GET', `/v1/projects/${books.id}/metrics`);
    expect(after).toMatchObject({
      subscriptions: { active: 0, trialing: 1 },
      mrr: [],
      last_30_days: { new: 2, churned: 1 },
    });
    expect(after.daily.slice(-2).map((day: { active: number }) => day.active)).toEqual([1, 0]);
  });
});

describe('who sees what', () => {
  it('a token with project-subscription:view-any alone sees the counts, and null for every money field', async () => {
    const books = await newProject('Books');
    await ok(
      'POST',
      `/v1/projects/${books.id}/payments`,
      { subscriber_id: await books.subscriber('Ada'), plan_id: books.gold, status: 'succeeded' },
      201,
    );
    const counts = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-subscription:view-any'],
    });
    for (const path of [`/v1/projects/${books.id}/metrics`, '/v1/metrics']) {
      const figures = await ok('GET', path, undefined, 200, { token: counts.token });
      expect(figures).toMatchObject({
        subscriptions: { active: 1 },
        mrr: null,
        last_30_days: { new: 1, revenue: null, refunds: null, failed_payments: 0 },
      });
      expect(figures.daily.every((day: { revenue: unknown }) => day.revenue === null)).toBe(true);
    }
    const moneyOnly = await seedToken(runtime.store, clock, {
      teamId: team.team.id,
      abilities: ['project-payment:view-any'],
    });
    expectRestProblem(await call('GET', '/v1/metrics', undefined, { token: moneyOnly.token }), 'TOKEN_MISSING_ABILITY');
    expectRestProblem(
      await call('GET', `/v1/projects/${books.id}/metrics`, undefined, { token: moneyOnly.token }),
      'TOKEN_MISSING_ABILITY',
    );
  });

  it('a project-scoped token reads its projects’ metrics; another project answers NOT_FOUND; the team’s figures are team-wide data', async () => {
    const books = await newProject('Books');
    const films = await newProject('Films');
    const scoped = await seedToken(runtime.store, clock, { teamId: team.team.id, projectIds: [books.id] });
    expect(await ok('GET', `/v1/projects/${books.id}/metrics`, undefined, 200, { token: scoped.token })).toMatchObject({
      project_id: books.id,
    });
    const outside = expectRestProblem(
      await call('GET', `/v1/projects/${films.id}/metrics`, undefined, { token: scoped.token }),
      'NOT_FOUND',
    );
    expect(outside.detail).toBe(`No project ${films.id}.`);
    expectRestProblem(await call('GET', '/v1/metrics', undefined, { token: scoped.token }), 'TOKEN_MISSING_ABILITY');
  });

  it('another team’s project answers exactly like no such project', async () => {
    const other = await seedTeam(runtime.store, clock);
    const foreign = (
      await ok('POST', '/v1/projects', { name: 'Theirs', platform_type: 'telegram' }, 201, { token: other.token })
    ).id as string;
    const missing = randomUUID();
    const theirs = expectRestProblem(await call('GET', `/v1/projects/${foreign}/metrics`), 'NOT_FOUND');
    const none = expectRestProblem(await call('GET', `/v1/projects/${missing}/metrics`), 'NOT_FOUND');
    expect({ ...theirs, detail: theirs.detail.replace(foreign, 'ID'), request_id: null, instance: null }).toEqual({
      ...none,
      detail: none.detail.replace(missing, 'ID'),
      request_id: null,
      instance: null,
    });
    // Their figures are not ours.
    expect((await ok('GET', '/v1/metrics')).subscriptions).toEqual({ active: 0, trialing: 0, past_due: 0 });
  });
});
