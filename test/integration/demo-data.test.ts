/**
 * The demo history `npm start` seeds into a fresh store (DESIGN §5): about 40 subscribers over 60 days
 * through the pipeline's operations (as the operator) and the deadline handlers, read back through the REST API.
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DAY_MS, manualClock } from '../../shared/clock.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { expectedPayments } from '../../shared/local/demo-calendar.js';
import type { LocalService } from '../../shared/local/service.js';
import { entity } from '../../shared/store/keys.js';
import { startTestService } from '../support/local-service.js';

const clock = manualClock();
let service: LocalService;
let projectId: string;

/** Every item of a list (following `next_cursor`), read with the demo token. */
async function listAll(base: Pick<LocalService, 'baseUrl' | 'demoToken'>, path: string): Promise<any[]> {
  const items: any[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const response = await fetch(
      `${base.baseUrl}${path}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      {
        headers: { Authorization: `Bearer ${base.demoToken}` },
      },
    );
    expect(response.status).toBe(200);
    const page = (await response.json()) as { data: any[]; next_cursor: string | null };
    items.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

/** What the demo project holds: its projects' ids, subscriptions and payments, as `base` lists them. */
async function holdings(base: Pick<LocalService, 'baseUrl' | 'demoToken'>) {
  return {
    projects: (await listAll(base, '/v1/projects')).map((project) => project.id),
    subscriptions: (await listAll(base, `/v1/projects/${projectId}/subscriptions`)).length,
    payments: (await listAll(base, `/v1/projects/${projectId}/payments`)).length,
  };
}
let seededOnce: Awaited<ReturnType<typeof holdings>>;
let afterSecondStart: Awaited<ReturnType<typeof holdings>>;

beforeAll(async () => {
  service = await startTestService({ clock, demoHistory: true });
  const [project] = await listAll(service, '/v1/projects');
  projectId = project.id;
  // A second start on the same store (here, not in a test: a test's own tables are dropped after it).
  seededOnce = await holdings(service);
  const again = await startTestService({ clock, demoHistory: true, tableName: service.store.tableName });
  try {
    afterSecondStart = await holdings(again);
  } finally {
    await again.stop();
  }
}, 180_000);

afterAll(async () => {
  await service?.stop();
});

describe('demo history', () => {
  it('seeds about 40 subscribers in the demo project, with subscriptions in varied statuses', async () => {
    const subscribers = await listAll(service, `/v1/projects/${projectId}/subscribers`);
    expect(subscribers.length).toBeGreaterThanOrEqual(38);
    expect(subscribers.length).toBeLessThanOrEqual(50);
    const subscriptions = await listAll(service, `/v1/projects/${projectId}/subscriptions`);
    const statuses = new Set(subscriptions.map((subscription) => subscription.status));
    for (const status of ['trialing', 'active', 'pending_cancellation', 'canceled', 'past_due'])
      expect(statuses).toContain(status);
    const sources = new Set(subscriptions.map((subscription) => subscription.source));
    for (const source of ['provider', 'free_plan', 'creator_grant', 'access_code']) expect(sources).toContain(source);
    // Created day by day over the last 60 days, none after now.
    const created = subscriptions.map((subscription) => Date.parse(subscription.created_at));
    expect(Math.min(...created)).toBeGreaterThanOrEqual(clock.nowMs() - 60 * DAY_MS);
    expect(Math.max(...created)).toBeLessThanOrEqual(clock.nowMs());
    expect(Math.min(...created)).toBeLessThan(clock.nowMs() - 55 * DAY_MS);
    // Trials that ended converted by the clock: a converted trial is active from its trial's end.
    const converted = subscriptions.filter(
      (subscription) => subscription.source === 'creator_grant' && subscription.status === 'active',
    );
    expect(converted.length).toBeGreaterThan(0);
    for (const subscription of converted) expect(subscription.current_period_start).toBe(subscription.trial_ends_at);
  });

  it('records payments on at least 50 distinct days of the last 60, renewals among them, and one refund', async () => {
    const payments = await listAll(service, `/v1/projects/${projectId}/payments`);
    const recent = payments.filter((payment) => Date.parse(payment.created_at) >= clock.nowMs() - 60 * DAY_MS);
    expect(new Set(recent.map((payment) => payment.created_at.slice(0, 10))).size).toBeGreaterThanOrEqual(50);
    expect(
      payments.filter((payment) => payment.billing_reason === 'renewal' && payment.status === 'succeeded').length,
    ).toBeGreaterThanOrEqual(10);
    expect(payments.filter((payment) => payment.status === 'failed')).toHaveLength(1);
    // Exactly the payments of the demo calendar (the one its unit test checks on every date).
    const recorded = payments
      .map(({ created_at, billing_reason, status }) => ({ created_at, billing_reason, status }))
      .map((payment) => ({ ...payment, status: payment.status === 'refunded' ? 'succeeded' : payment.status }));
    const planned = expectedPayments(clock.nowMs()).map(({ atMs, billing_reason, status }) => ({
      created_at: new Date(atMs).toISOString(),
      billing_reason,
      status,
    }));
    const byTime = (a: { created_at: string }, b: { created_at: string }) => a.created_at.localeCompare(b.created_at);
    expect(recorded.sort(byTime)).toEqual(planned);
    const refunded = payments.filter((payment) => payment.amount_refunded > 0);
    expect(refunded).toHaveLength(1);
    expect(refunded[0]).toMatchObject({ status: 'refunded', provider: 'manual' });
  });

  it('has a few members without platform errors, and events of the history', async () => {
    const members = await listAll(service, `/v1/projects/${projectId}/members`);
    expect(members.length).toBeGreaterThanOrEqual(3);
    expect(members.every((member) => member.platform_error === null)).toBe(true);
    expect(new Set(members.map((member) => member.status))).toEqual(new Set(['joined', 'left']));
    const events = await listAll(
      service,
      `/v1/events?project_id=${projectId}&created_after=${new Date(clock.nowMs() - 25 * DAY_MS).toISOString()}`,
    );
    const types = new Set(events.map((event) => event.type));
    for (const type of [
      'subscription.created',
      'payment.succeeded',
      'subscription.renewed',
      'subscription.activated',
      'subscription.canceled',
      'payment.refunded',
    ])
      expect(types).toContain(type);
  });

  it('leaves no deadline in the past and no platform retry: the worker finds nothing due at start', async () => {
    const scanned = await service.store.document.send(
      new ScanCommand({
        TableName: service.store.tableName,
        FilterExpression: 'entity = :deadline',
        ExpressionAttributeValues: { ':deadline': entity.deadline },
      }),
    );
    const deadlines = scanned.Items ?? [];
    expect(deadlines.length).toBeGreaterThan(0);
    // Subscriptions' clock and the team's billing period only: no platform sync or invite-link retry (no bot, no linked
    // chat).
    expect(new Set(deadlines.map((deadline) => deadline.kind))).toEqual(
      new Set(['subscription.clock', 'billing.period']),
    );
    for (const deadline of deadlines) expect(Date.parse(deadline.due_at)).toBeGreaterThan(clock.nowMs());
    expect(await applyDueDeadlines(service.runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
  });

  it('gives the dashboard real figures: active subscriptions, MRR, recent revenue and a refund, and 60 days of series', async () => {
    const response = await fetch(`${service.baseUrl}/v1/metrics`, {
      headers: { Authorization: `Bearer ${service.demoToken}` },
    });
    expect(response.status).toBe(200);
    const metrics = await response.json();
    expect(metrics.subscriptions.active).toBeGreaterThanOrEqual(20);
    expect(metrics.subscriptions.trialing).toBeGreaterThan(0);
    expect(metrics.subscriptions.past_due).toBe(1);
    expect(metrics.mrr).toEqual([{ currency: 'EUR', amount: expect.any(Number) }]);
    expect(metrics.mrr[0].amount).toBeGreaterThan(0);
    expect(metrics.last_30_days.revenue[0].amount).toBeGreaterThan(0);
    expect(metrics.last_30_days.churned).toBeGreaterThan(0);
    // The active series climbs over the history: none before it, some on most of its 60 days.
    const series = metrics.daily as { date: string; active: number; revenue: { amount: number }[] }[];
    expect(series.slice(0, 25).every((day) => day.active === 0)).toBe(true);
    expect(series.filter((day) => day.active > 0).length).toBeGreaterThanOrEqual(50);
    expect(series.filter((day) => day.revenue.length > 0).length).toBeGreaterThanOrEqual(40);
  });

  it('changes state only through operations run as the operator: each is in the activity log on its day', async () => {
    const entries = (await listAll(service, '/v1/activity')).filter((entry) => entry.surface === 'operator');
    const count = (operation: string) => entries.filter((entry) => entry.operation === operation).length;
    expect(
      entries.every((entry) => entry.outcome === 'ok' && entry.token_id === null && entry.member_id === null),
    ).toBe(true);
    for (const [operation, times] of [
      ['changeBillingTier', 1],
      ['createProject', 1],
      ['createPlan', 3],
      ['generateAccessCodes', 1],
      ['connectProjectPaymentProvider', 1],
      ['refundPayment', 1],
    ] as const)
      expect(count(operation)).toBe(times);
    const subscriptions = await listAll(service, `/v1/projects/${projectId}/subscriptions`);
    const bySource = (source: string) => subscriptions.filter((subscription) => subscription.source === source).length;
    expect(count('redeemAccessCode')).toBe(bySource('access_code'));
    expect(count('createSubscription')).toBe(bySource('free_plan') + bySource('creator_grant'));
    expect(count('recordPayment')).toBe((await listAll(service, `/v1/projects/${projectId}/payments`)).length);
    expect(count('createSubscriber')).toBe(subscriptions.length - bySource('access_code'));
    // Each member joined the group once, and some left it.
    const members = await listAll(service, `/v1/projects/${projectId}/members`);
    expect(count('recordPlatformMembership')).toBe(
      members.length + members.filter((member) => member.status === 'left').length,
    );
    // Dated by the history's clock: the first steps 60 days ago, none after now.
    const times = entries.map((entry) => Date.parse(entry.occurred_at));
    expect(Math.min(...times)).toBeLessThan(clock.nowMs() - 55 * DAY_MS);
    expect(Math.max(...times)).toBeLessThanOrEqual(clock.nowMs());
  });

  it('seeds nothing again into the same store', () => {
    expect(seededOnce.projects).toEqual([projectId]);
    expect(seededOnce.subscriptions).toBeGreaterThan(0);
    expect(afterSecondStart).toEqual(seededOnce);
  });
});
