/**
 * The daily access audit (DESIGN D34): a project's first audit starts its schedule: it is audited a day later and every
 * day after, by the deadline worker (the local timers run it every few seconds); `schedule: "off"` stops it and
 * `"daily"` brings it back; an audit still running is left alone that day. A project never audited has no schedule.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { ACCESS_AUDIT_INTERVAL_MS } from '../../shared/domain/access-audits/first-schedule.js';
import { processAccessAuditPage } from '../../shared/domain/access-audits/worker.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { caller } from '../support/calls.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;

const { ok } = caller(() => ({ runtime, token: team.token }));

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  team = await seedTeam(runtime.store, clock);
  projectId = (await ok('POST', '/v1/projects', { name: 'Club', platform_type: 'web' }, 201)).id as string;
});

/** Moves the clock a day on and runs the deadline worker; answers the audit pages it queued. */
async function nextDay() {
  clock.advance(ACCESS_AUDIT_INTERVAL_MS);
  await applyDueDeadlines(runtime, clock.nowMs());
  return runtime.auditPages.splice(0);
}

describe('the daily access audit', () => {
  it('audits a project a day after its first audit and every day after, until its schedule is off', async () => {
    expect(await nextDay()).toEqual([]);
    await ok('POST', `/v1/projects/${projectId}/access-audits`, {}, 202);
    await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    clock.advance(ACCESS_AUDIT_INTERVAL_MS - 60_000);
    await applyDueDeadlines(runtime, clock.nowMs());
    expect(runtime.auditPages).toEqual([]);
    clock.advance(60_000);
    await applyDueDeadlines(runtime, clock.nowMs());
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
});
