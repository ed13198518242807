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

import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEADLINE_SHARDS, dueSortKeyBound } from '../../shared/deadlines/deadline.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import type { Payment } from '../../shared/domain/payments/schema.js';
import type { Plan } from '../../shared/domain/plans/schema.js';
import type { Subscription } from '../../shared/domain/subscriptions/schema.js';
import { METRICS_RECENT_DAYS, METRICS_SERIES_DAYS, type Metrics } from '../../shared/domain/metrics/schema.js';
import { keys, secondaryIndex } from '../../shared/store/keys.js';
import { teamEvents } from '../support/events.js';
import { rest } from '../support/calls.js';
import {
  call,
  clock,
  newProject,
  ok,
  runtime,
  startNewTeam,
  store,
  team,
  useMetricsFixture,
} from '../support/fixtures/metrics.js';
import { DAY_MS } from '../../shared/clock.js';

useMetricsFixture();

/**
 * One step of a randomized sequence; targets are taken modulo what exists (a step the state does not allow answers 4xx
 * and changes nothing).
 */
type Step =
  | { kind: 'create'; project: number; plan: number; how: 'grant' | 'trial' | 'fixed' | 'paid' | 'pending' | 'failed' }
  | {
      kind: 'transition';
      target: number;
      action: 'cancel_end' | 'cancel_now' | 'pause' | 'resume' | 'suspend' | 'unsuspend';
    }
  | { kind: 'change_plan'; target: number; plan: number }
  | { kind: 'pay'; target: number; status: 'succeeded' | 'failed' | 'pending' }
  | { kind: 'settle'; target: number; status: 'succeeded' | 'failed' }
  | { kind: 'refund'; target: number; whole: boolean; cancel: boolean }
  | { kind: 'advance'; days: number };

const steps: fc.Arbitrary<Step[]> = fc.array(
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('create'),
        project: fc.nat(1),
        plan: fc.nat(2),
        how: fc.constantFrom('grant', 'trial', 'fixed', 'paid', 'pending', 'failed'),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant('transition'),
        target: fc.nat(),
        action: fc.constantFrom('cancel_end', 'cancel_now', 'pause', 'resume', 'suspend', 'unsuspend'),
      }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('change_plan'), target: fc.nat(), plan: fc.nat(2) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('pay'),
        target: fc.nat(),
        status: fc.constantFrom('succeeded', 'failed', 'pending'),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('settle'),
        target: fc.nat(),
        status: fc.constantFrom('succeeded', 'failed'),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant('refund'),
        target: fc.nat(),
        whole: fc.boolean(),
        cancel: fc.boolean(),
      }),
    },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance'), days: fc.integer({ min: 1, max: 25 }) }) },
  ),
  { minLength: 4, maxLength: 20 },
);

/**
 * A sequence fast-check once found: a one-off pass suspended, its term ending while suspended, then unsuspended and
 * ended by the clock (the end took effect before the unsuspension).
 */
const TERM_ENDED_AFTER_UNSUSPEND: Step[] = [
  { kind: 'create', project: 1, plan: 1, how: 'paid' },
  { kind: 'transition', target: 0, action: 'suspend' },
  { kind: 'advance', days: 24 },
  { kind: 'advance', days: 24 },
  { kind: 'create', project: 0, plan: 1, how: 'grant' },
  { kind: 'transition', target: 0, action: 'unsuspend' },
  { kind: 'advance', days: 4 },
];

/** Money per currency as the API lists it: sorted by currency, zero amounts left out. */
const moneyList = (amounts: Map<string, number>) =>
  [...amounts]
    .filter(([, amount]) => amount !== 0)
    .map(([currency, amount]) => ({ currency, amount }))
    .sort((a, b) => (a.currency < b.currency ? -1 : 1));

const addTo = (amounts: Map<string, number>, currency: string, amount: number) =>
  amounts.set(currency, (amounts.get(currency) ?? 0) + amount);

const dayOf = (time: string | number) => new Date(time).toISOString().slice(0, 10);

const ACCESS = new Set(['trialing', 'active', 'pending_cancellation', 'past_due']);

const MONTHS_PER_INTERVAL: Record<string, number> = { week: 12 / 52, month: 1, year: 12 };

/**
 * The metrics of `projectIds` recounted from the subscriptions and payments themselves: gauges and MRR from
 * their state now (`subscriptions`, each plan's price version), the days from the states the team's events
 * carried at each change (`history`), the money fields null when `withMoney` is false.
 */
function recount(
  projectIds: readonly string[],
  subscriptions: readonly Subscription[],
  plans: ReadonlyMap<string, Plan>,
  history: { subscriptions: Map<string, Subscription[]>; payments: Map<string, Payment[]> },
  nowMs: number,
): Omit<Metrics, 'object' | 'project_id' | 'as_of'> {
  const mine = (projectId: string) => projectIds.includes(projectId);
  const dates = Array.from({ length: METRICS_SERIES_DAYS }, (_, index) =>
    dayOf(nowMs - (METRICS_SERIES_DAYS - 1 - index) * DAY_MS),
  );
  const recent = new Set(dates.slice(-METRICS_RECENT_DAYS));
  const current = subscriptions.filter((subscription) => mine(subscription.project_id));
  const mrr = new Map<string, number>();
  for (const subscription of current) {
    const plan = plans.get(subscription.plan_id)!;
    const price = plan.price_history.find((version) => version.version === subscription.price_version) ?? plan;
    const billed =
      ['active', 'pending_cancellation', 'past_due'].includes(subscription.status) &&
      subscription.payment_provider !== null &&
      subscription.ends_at === null;
    if (billed && price.interval !== 'one_time')
      addTo(
        mrr,
        price.currency,
        Math.round(price.amount / (MONTHS_PER_INTERVAL[price.interval] * price.interval_count)),
      );
  }
  let fresh = 0;
  let churned = 0;
  const activeOn = new Map(dates.map((date) => [date, 0]));
  for (const states of history.subscriptions.values()) {
    if (!mine(states[0].project_id)) continue;
    const gained = states.find((state) => ACCESS.has(state.status));
    if (gained && recent.has(dayOf(gained.status_changed_at))) fresh += 1;
    const ended = states.findIndex((state) => state.status === 'canceled' || state.status === 'expired');
    if (
      ended > 0 &&
      states.slice(0, ended).some((state) => !['pending', 'incomplete', 'scheduled'].includes(state.status)) &&
      recent.has(dayOf(states[ended].status_changed_at))
    )
      churned += 1;
    for (const date of dates) {
      const last = states.filter((state) => dayOf(state.status_changed_at) <= date).at(-1);
      if (last && (last.status === 'active' || last.status === 'pending_cancellation'))
        activeOn.set(date, activeOn.get(date)! + 1);
    }
  }
  const revenueOn = new Map(dates.map((date) => [date, new Map<string, number>()]));
  const revenue = new Map<string, number>();
  const refunds = new Map<string, number>();
  const discounts = new Map<string, number>();
  let failed = 0;
  for (const states of history.payments.values()) {
    if (!mine(states[0].project_id)) continue;
    const succeeded = states.find((state) => state.status === 'succeeded' || state.status === 'refunded');
    if (succeeded) {
      const day = dayOf(succeeded.updated_at);
      if (revenueOn.has(day)) addTo(revenueOn.get(day)!, succeeded.currency, succeeded.amount);
      if (recent.has(day)) addTo(revenue, succeeded.currency, succeeded.amount);
      if (recent.has(day) && succeeded.discount) addTo(discounts, succeeded.currency, succeeded.discount.amount);
    }
    const failure = states.find((state) => state.status === 'failed');
    if (failure && recent.has(dayOf(failure.updated_at))) failed += 1;
    states.forEach((state, index) => {
      const added = state.amount_refunded - (index ? states[index - 1].amount_refunded : 0);
      if (added && recent.has(dayOf(state.updated_at))) addTo(refunds, state.currency, added);
    });
  }
  return {
    subscriptions: {
      active: current.filter(
        (subscription) => subscription.status === 'active' || subscription.status === 'pending_cancellation',
      ).length,
      trialing: current.filter((subscription) => subscription.status === 'trialing').length,
      past_due: current.filter((subscription) => subscription.status === 'past_due').length,
    },
    mrr: moneyList(mrr),
    last_30_days: {
      new: fresh,
      churned,
      revenue: moneyList(revenue),
      refunds: moneyList(refunds),
      discounts: moneyList(discounts),
      failed_payments: failed,
    },
    daily: dates.map((date) => ({ date, active: activeOn.get(date)!, revenue: moneyList(revenueOn.get(date)!) })),
  };
}

/**
 * The smallest deadline index sort key of `teamId`'s deadlines over all the index's shards (one Scan of the
 * index), or null when the team has none. The worker applies exactly the deadlines whose sort key is below
 * `dueSortKeyBound(now)`, so while this one is not, a run of the worker would change nothing of the team's.
 */
async function earliestDeadlineSortKey(teamId: string): Promise<string | null> {
  const shards = Array.from({ length: DEADLINE_SHARDS }, (_, shard) => keys.deadlineIndex(shard));
  let earliest: string | null = null;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await store.document.send(
      new ScanCommand({
        TableName: store.tableName,
        IndexName: secondaryIndex.name,
        FilterExpression: `#pk IN (${shards.map((_, index) => `:shard${index}`).join(', ')}) AND team_id = :team`,
        ProjectionExpression: '#sk',
        ExpressionAttributeNames: { '#pk': secondaryIndex.partitionKey, '#sk': secondaryIndex.sortKey },
        ExpressionAttributeValues: {
          ':team': teamId,
          ...Object.fromEntries(shards.map((shard, index) => [`:shard${index}`, shard])),
        },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const item of page.Items ?? []) {
      const sortKey = item[secondaryIndex.sortKey] as string;
      if (earliest === null || sortKey < earliest) earliest = sortKey;
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return earliest;
}

describe('the counters equal a recount (property)', () => {
  it('after randomized creations, transitions, payments, refunds and days passing, across projects, currencies and intervals', async () => {
    const tick = () => applyDueDeadlines(runtime, clock.nowMs());
    await fc.assert(
      fc.asyncProperty(steps, async (sequence) => {
        await startNewTeam();
        const books = await newProject('Books');
        const films = await newProject('Films');
        const annual = (
          await ok(
            'POST',
            `/v1/projects/${films.id}/plans`,
            { name: 'Annual', amount: 10_000, currency: 'EUR', interval: 'year' },
            201,
          )
        ).id as string;
        const pass = (
          await ok(
            'POST',
            `/v1/projects/${films.id}/plans`,
            { name: 'Pass', amount: 500, currency: 'GBP', interval: 'one_time', access_days: 20 },
            201,
          )
        ).id as string;
        const free = (
          await ok(
            'POST',
            `/v1/projects/${books.id}/plans`,
            { name: 'Free', amount: 0, currency: 'EUR', interval: 'month' },
            201,
          )
        ).id as string;
        const projects = [
          { ...books, plans: [books.gold, books.fortnight, free] },
          { ...films, plans: [annual, pass, films.gold] },
        ];
        const subscriptionIds: string[] = [];
        const paymentIds: string[] = [];
        const attempt = async (method: string, path: string, body: unknown) => {
          const reply = await call(method, path, body);
          expect(reply.status, reply.text).toBeLessThan(500);
          return reply.status < 300 ? reply.json : null;
        };
        const pick = <T>(list: readonly T[], index: number) => (list.length ? list[index % list.length] : undefined);
        for (const step of sequence) {
          clock.advance(60_000);
          if (step.kind === 'create') {
            const project = projects[step.project];
            const plan = project.plans[step.plan];
            const subscriber = await project.subscriber(`S${subscriptionIds.length}`);
            if (['grant', 'trial', 'fixed'].includes(step.how)) {
              const ends = step.how === 'fixed' ? { ends_at: new Date(clock.nowMs() + 10 * DAY_MS).toISOString() } : {};
              const created = await attempt('POST', `/v1/projects/${project.id}/subscriptions`, {
                subscriber_id: subscriber,
                plan_id: plan,
                trial: step.how === 'trial',
                ...ends,
              });
              if (created) subscriptionIds.push(created.id);
            } else {
              const payment = await attempt('POST', `/v1/projects/${project.id}/payments`, {
                subscriber_id: subscriber,
                plan_id: plan,
                status: step.how.replace('paid', 'succeeded'),
              });
              if (payment) {
                subscriptionIds.push(payment.subscription_id);
                paymentIds.push(payment.id);
              }
            }
          } else if (step.kind === 'transition') {
            const id = pick(subscriptionIds, step.target);
            if (!id) continue;
            const [action, body] = {
              cancel_end: ['cancel', {}],
              cancel_now: ['cancel', { at_period_end: false }],
              pause: ['pause', {}],
              resume: ['resume', {}],
              suspend: ['suspend', {}],
              unsuspend: ['unsuspend', {}],
            }[step.action];
            await attempt('POST', `/v1/subscriptions/${id}/${action as string}`, body);
          } else if (step.kind === 'change_plan') {
            const id = pick(subscriptionIds, step.target);
            const subscription = id ? await ok('GET', `/v1/subscriptions/${id}`) : null;
            const project = projects.find((candidate) => candidate.id === subscription?.project_id);
            if (project)
              await attempt('POST', `/v1/subscriptions/${id}/change-plan`, { plan_id: project.plans[step.plan] });
          } else if (step.kind === 'pay') {
            const id = pick(subscriptionIds, step.target);
            const subscription = id ? await ok('GET', `/v1/subscriptions/${id}`) : null;
            const payment =
              subscription &&
              (await attempt('POST', `/v1/projects/${subscription.project_id}/payments`, {
                subscription_id: id,
                status: step.status,
              }));
            if (payment) paymentIds.push(payment.id);
          } else if (step.kind === 'settle') {
            const id = pick(paymentIds, step.target);
            if (id) await attempt('POST', `/v1/payments/${id}`, { status: step.status });
          } else if (step.kind === 'refund') {
            const id = pick(paymentIds, step.target);
            const payment = id ? await ok('GET', `/v1/payments/${id}`) : null;
            const part = payment ? Math.max(1, Math.floor((payment.amount - payment.amount_refunded) / 3)) : 0;
            if (payment)
              await attempt('POST', `/v1/payments/${id}/refund`, {
                ...(step.whole ? {} : { amount: part }),
                ...(step.cancel ? { cancel: true } : {}),
              });
          } else {
            // The worker runs once a day; on a day before the team's earliest deadline it would change nothing of the
            // team's (earlier runs' teams are done with: their deadlines wait for a day this team has one due).
            let earliest = await earliestDeadlineSortKey(team.team.id);
            for (let day = 0; day < step.days; day += 1) {
              clock.advance(DAY_MS);
              if (earliest === null || earliest >= dueSortKeyBound(clock.nowMs())) continue;
              await tick();
              earliest = await earliestDeadlineSortKey(team.team.id);
            }
          }
        }

        // The recount: the states each event carried, ordered by when they took effect; the state now; the plans.
        const history = { subscriptions: new Map<string, Subscription[]>(), payments: new Map<string, Payment[]>() };
        for (const event of await teamEvents(runtime.store, team.team.id)) {
          const data = event.data as { subscription?: Subscription; payment?: Payment };
          if (data.subscription && event.type.startsWith('subscription.'))
            history.subscriptions.set(data.subscription.id, [
              ...(history.subscriptions.get(data.subscription.id) ?? []),
              data.subscription,
            ]);
          if (data.payment && event.type.startsWith('payment.'))
            history.payments.set(data.payment.id, [...(history.payments.get(data.payment.id) ?? []), data.payment]);
        }
        for (const states of [...history.subscriptions.values(), ...history.payments.values()])
          states.sort((a, b) => (a.updated_at < b.updated_at ? -1 : a.updated_at > b.updated_at ? 1 : 0));
        const subscriptions: Subscription[] = [];
        const plans = new Map<string, Plan>();
        const list = async (path: string) =>
          (await rest(runtime, { method: 'GET', path, token: team.token, query: { limit: '100' } })).json.data;
        for (const project of projects) {
          subscriptions.push(...(await list(`/v1/projects/${project.id}/subscriptions`)));
          for (const plan of (await list(`/v1/projects/${project.id}/plans`)) as Plan[]) plans.set(plan.id, plan);
        }
        expect(subscriptions).toHaveLength(subscriptionIds.length);
        const nowMs = clock.nowMs();
        for (const project of projects) {
          const figures = await ok('GET', `/v1/projects/${project.id}/metrics`);
          expect({ ...figures, as_of: null }).toEqual({
            object: 'metrics',
            project_id: project.id,
            as_of: null,
            ...recount([project.id], subscriptions, plans, history, nowMs),
          });
        }
        const teamFigures = await ok('GET', '/v1/metrics');
        expect({ ...teamFigures, as_of: null }).toEqual({
          object: 'metrics',
          project_id: null,
          as_of: null,
          ...recount([books.id, films.id], subscriptions, plans, history, nowMs),
        });
      }),
      // The fixed example runs first and fails when a clock transition may take effect before the subscription's
      // last change (decideTransition without its effective time); the other runs are random sequences.
      { numRuns: 8, endOnFailure: true, examples: [[TERM_ENDED_AFTER_UNSUSPEND]] },
    );
  }, 300_000);
});
