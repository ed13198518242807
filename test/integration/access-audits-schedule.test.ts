/**
 * The daily access audit (DESIGN D34): every project is on the schedule from its creation, and the deadline worker's
 * run (the local timers run it every few seconds) audits it daily once it has something to compare (Stripe billing, a
 * bot watching a linked chat) or was audited before; a project's first audit puts its next a day later;
 * `schedule: "off"` takes the project out of the schedule index and `"daily"` puts it back, a day on; an audit still
 * running is left alone that day. A project
 * with nothing to compare, never audited, is not audited; a deleted project leaves the schedule.
 */
import { randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { ACCESS_AUDIT_INTERVAL_MS } from '../../shared/domain/access-audits/first-schedule.js';
import { startDueAccessAudits } from '../../shared/domain/access-audits/scheduler.js';
import { processAccessAuditPage } from '../../shared/domain/access-audits/worker.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { accessAuditScheduleStore } from '../../shared/store/access-audit-schedule.js';
import { keys, secondaryIndex } from '../../shared/store/keys.js';
import { caller } from '../support/calls.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { startFakeStripeApi } from '../support/stripe-api.js';
import { connectStripe } from '../support/stripe.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;

const { call, ok } = caller(() => ({ runtime, token: team.token }));

/** One run of the deadline worker at the clock's now: the deadlines, then the daily audits. */
async function applyDueDeadlinesAndAudits() {
  await applyDueDeadlines(runtime, clock.nowMs());
  return startDueAccessAudits(runtime, clock.nowMs());
}

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Club', platform_type: 'web' }, 201)).id as string;
});

/** Moves the clock a day on and runs the deadline worker; answers the audit pages it queued. */
async function nextDay() {
  clock.advance(ACCESS_AUDIT_INTERVAL_MS);
  await applyDueDeadlinesAndAudits();
  return runtime.auditPages.splice(0);
}

describe('the daily access audit', () => {
  it('audits a project a day after its first audit and every day after, until its schedule is off', async () => {
    expect(await nextDay()).toEqual([]);
    await ok('POST', `/v1/projects/${projectId}/access-audits`, {}, 202);
    await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    clock.advance(ACCESS_AUDIT_INTERVAL_MS - 60_000);
    await applyDueDeadlinesAndAudits();
    expect(runtime.auditPages).toEqual([]);
    clock.advance(60_000);
    await applyDueDeadlinesAndAudits();
    const [first] = runtime.auditPages.splice(0);
    expect(first).toMatchObject({ kind: 'access_audit_page', project_id: projectId });
    // Still running the next day: that day's audit is skipped, the schedule goes on.
    expect(await nextDay()).toEqual([]);
    await processAccessAuditPage(runtime, first);
    expect(await ok('GET', `/v1/projects/${projectId}/access-audits/latest`)).toMatchObject({
      id: first.audit_id,
      trigger: 'schedule',
      status: 'succeeded',
      policy: 'report',
    });
    const [second] = await nextDay();
    await processAccessAuditPage(runtime, second);

    await ok('POST', `/v1/projects/${projectId}/access-audits`, { schedule: 'off' }, 202);
    while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    expect(await nextDay()).toEqual([]);
    await ok('POST', `/v1/projects/${projectId}/access-audits`, { schedule: 'daily' }, 202);
    while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    expect(await nextDay()).toHaveLength(1);
  });

  it('audits a project billed through Stripe daily from its creation, at the cost of a move for one with nothing to compare', async () => {
    const stripeApi = await startFakeStripeApi({ nowMs: () => clock.nowMs() });
    try {
      runtime.integrations = {
        keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
        telegramApiRoot: 'http://127.0.0.1:9',
        stripeApiBaseUrl: stripeApi.url,
        retry: { retries: 1, minTimeoutMs: 0 },
      };
      const billed = (await ok('POST', '/v1/projects', { name: 'Billed', platform_type: 'web' }, 201)).id as string;
      await connectStripe(stripeApi, (path, body) => ok('PUT', path, body), billed);
      const [first, ...others] = await nextDay();
      expect(others).toEqual([]);
      expect(first).toMatchObject({ kind: 'access_audit_page', project_id: billed });
      await processAccessAuditPage(runtime, first);
      while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
      expect(await ok('GET', `/v1/projects/${billed}/access-audits/latest`)).toMatchObject({
        trigger: 'schedule',
        status: 'succeeded',
      });
      expect((await call('GET', `/v1/projects/${projectId}/access-audits/latest`)).status).toBe(404);
      // Both stay on the schedule, a day on; a deleted project leaves it.
      const state = (id: string) => runtime.store.get(keys.accessAuditState(team.team.id, id));
      expect(Date.parse(String((await state(projectId))?.next_audit_at))).toBe(
        clock.nowMs() + ACCESS_AUDIT_INTERVAL_MS,
      );
      await ok('DELETE', `/v1/projects/${projectId}`);
      expect(await nextDay()).toHaveLength(1);
      expect(await state(projectId)).toBeUndefined();
      expect(await state(billed)).toBeDefined();
    } finally {
      await stripeApi.stop();
    }
  });
});

describe('the access audit settings', () => {
  const settings = () => `/v1/projects/${projectId}/access-audit-settings`;

  it('reads and changes the policy and schedule without running an audit; the next audit keeps them', async () => {
    const createdAt = clock.nowMs();
    expect(await ok('GET', settings())).toEqual({
      project_id: projectId,
      policy: 'report',
      schedule: 'daily',
      next_audit_at: new Date(createdAt + ACCESS_AUDIT_INTERVAL_MS).toISOString(),
    });
    expect(await ok('POST', settings(), { policy: 'repair' })).toMatchObject({ policy: 'repair', schedule: 'daily' });
    expect(await ok('POST', settings(), { schedule: 'off' })).toMatchObject({ policy: 'repair', schedule: 'off' });
    expect(runtime.auditPages).toEqual([]);
    expect((await call('GET', `/v1/projects/${projectId}/access-audits/latest`)).status).toBe(404);
    expect((await call('POST', settings(), { policy: 'sometimes' })).status).toBe(422);
    expect(await ok('GET', settings())).toMatchObject({ policy: 'repair', schedule: 'off' });

    await ok('POST', `/v1/projects/${projectId}/access-audits`, {}, 202);
    while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    expect(await ok('GET', `/v1/projects/${projectId}/access-audits/latest`)).toMatchObject({ policy: 'repair' });
    expect(await nextDay()).toEqual([]);
    await ok('POST', settings(), { schedule: 'daily' });
    expect(await nextDay()).toHaveLength(1);
  });

  it('takes a project whose schedule is off out of the schedule index, and daily puts it back a day on', async () => {
    const state = () => runtime.store.get(keys.accessAuditState(team.team.id, projectId));
    const due = async () =>
      (
        await accessAuditScheduleStore.pageDue(runtime.store, clock.nowMs() + 7 * ACCESS_AUDIT_INTERVAL_MS, undefined)
      ).items
        .map((scheduled) => scheduled.projectId)
        .filter((id) => id === projectId);
    expect(await due()).toEqual([projectId]);

    expect(await ok('POST', settings(), { schedule: 'off' })).toMatchObject({ schedule: 'off', next_audit_at: null });
    expect(await state()).not.toHaveProperty(secondaryIndex.partitionKey);
    expect(await state()).not.toHaveProperty('next_audit_at');
    expect(await due()).toEqual([]);
    clock.advance(60_000);
    const back = new Date(clock.nowMs() + ACCESS_AUDIT_INTERVAL_MS).toISOString();
    expect(await ok('POST', settings(), { schedule: 'daily' })).toMatchObject({
      schedule: 'daily',
      next_audit_at: back,
    });
    expect(await due()).toEqual([projectId]);
    // Daily again changes nothing; an audit asking for off takes it out, one asking for daily puts it back.
    expect(await ok('POST', settings(), { schedule: 'daily' })).toMatchObject({ next_audit_at: back });
    await ok('POST', `/v1/projects/${projectId}/access-audits`, { schedule: 'off' }, 202);
    while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    expect(await due()).toEqual([]);
    expect(await ok('GET', settings())).toMatchObject({ schedule: 'off', next_audit_at: null });
    clock.advance(60_000);
    await ok('POST', `/v1/projects/${projectId}/access-audits`, { schedule: 'daily' }, 202);
    expect(await ok('GET', settings())).toMatchObject({
      schedule: 'daily',
      next_audit_at: new Date(clock.nowMs() + ACCESS_AUDIT_INTERVAL_MS).toISOString(),
    });
    expect(await due()).toEqual([projectId]);
  });

  it('takes a project found off in the index out of it when due, without auditing it', async () => {
    const key = keys.accessAuditState(team.team.id, projectId);
    await runtime.store.update({
      Key: key,
      UpdateExpression: 'SET schedule = :off',
      ExpressionAttributeValues: { ':off': 'off' },
    });
    expect(await nextDay()).toEqual([]);
    const state = await runtime.store.get(key);
    expect(state).toMatchObject({ schedule: 'off' });
    expect(state).not.toHaveProperty(secondaryIndex.sortKey);
    expect(state).not.toHaveProperty('next_audit_at');
  });
});
