/**
 * The dashboard's Broadcasts page without a browser (DESIGN D21, D32): the compose form sends through
 * `createBroadcast` (a refusal shows Liquid's line and column with the texts as typed), and the list of broadcasts
 * with their counts asks htmx to refresh it while one runs, and stops once none does.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';
import { dashboardEvent } from '../support/calls.js';

let runtime: TestRuntime;
let projectId: string;
let get: (path: string) => ReturnType<typeof handleDashboardRequest>;
let post: (path: string, fields: Record<string, string>) => ReturnType<typeof handleDashboardRequest>;

beforeEach(async () => {
  const clock = testClock();
  runtime = await createTestRuntime({ clock });
  const seeded = await seedTeam(runtime.store, clock);
  const teamId = seeded.team.id;
  projectId = (await createProject(runtime, seeded.principal, { name: 'Night Owls', platform_type: 'telegram' })).id;
  const owner = await ensureTeamOwner(runtime, teamId, { email: `owner-${randomUUID()}@example.com`, name: 'Owner' });
  const { session, cookieValue } = await createSession(runtime.store, clock, {
    teamId,
    memberId: owner.id,
    state: 'active',
    method: 'passkey',
  });
  get = (path) => handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }));
  post = (path, fields) =>
    handleDashboardRequest(
      runtime,
      dashboardEvent('POST', path, {
        cookie: cookieValue,
        form: new URLSearchParams({
          csrf_token: session.csrf_token,
          idempotency_key: randomUUID(),
          ...fields,
        }).toString(),
      }),
    );
});

const broadcasts = () => `/dashboard/projects/${projectId}/broadcasts`;

describe('the Broadcasts page', () => {
  it('sends a broadcast and refreshes its counts while it runs', async () => {
    const empty = await get(broadcasts());
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('aria-current="page" class="button">Broadcasts</a>');
    expect(empty.body).toContain('No broadcasts yet.');
    expect(empty.body).not.toContain('hx-trigger');

    const sent = await post(broadcasts(), {
      statuses: 'active',
      delivery: 'preferred',
      subject: 'Live tonight',
      body: 'Hi {{ subscriber.name }}!',
    });
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('The broadcast is on its way.');
    expect(sent.body).toContain('Live tonight');
    expect(sent.body).toContain(`hx-get="${broadcasts()}/list"`);
    expect(sent.body).toContain('hx-trigger="every 3s"');

    for (const message of runtime.broadcastBatches.splice(0)) await processJobMessage(runtime, message);
    const list = await get(`${broadcasts()}/list`);
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain('id="broadcast-list"');
    expect(list.body).toContain('completed');
    expect(list.body).not.toContain('hx-trigger');
  });

  it('shows a refusal with the line and column, and keeps the texts as typed', async () => {
    const refused = await post(broadcasts(), {
      statuses: 'active',
      subject: 'Live tonight',
      body: 'Hi {{ subscriber.phone }}',
    });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toMatch(/line 1, column \d+/);
    expect(refused.body).toContain('Hi {{ subscriber.phone }}');
    expect(runtime.broadcastBatches).toEqual([]);
  });
});
