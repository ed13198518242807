/**
 * The dashboard's Access audit page without a browser (DESIGN D21, D34): "Run audit now" starts the audit through
 * `createAccessAudit`, the page lists the latest audit's findings with a Repair button each (CSRF like every form),
 * the repair runs `repairAccessAuditFinding` and the Discord fake sees the role removed; the home page counts the open
 * findings and links to the page. The policy and schedule form saves them through `updateAccessAuditSettings` without
 * running an audit.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { processAccessAuditPage } from '../../shared/domain/access-audits/worker.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { dashboardEvent } from '../support/calls.js';
import {
  GUILD_ID,
  ROLE_ID,
  call,
  clock,
  connectAndLink,
  discord,
  projectId,
  runtime,
  team,
  useDiscordFixture,
} from '../support/fixtures/discord.js';

useDiscordFixture();

const STRANGER = '700000000000000077';

let get: (path: string) => ReturnType<typeof handleDashboardRequest>;
let post: (path: string, fields?: Record<string, string>) => ReturnType<typeof handleDashboardRequest>;

beforeEach(async () => {
  const owner = await ensureTeamOwner(runtime, team.team.id, {
    email: `owner-${randomUUID()}@example.com`,
    name: 'Owner',
  });
  const { session, cookieValue } = await createSession(runtime.store, clock, {
    teamId: team.team.id,
    memberId: owner.id,
    state: 'active',
    method: 'passkey',
  });
  get = (path) => handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }));
  post = (path, fields = {}) =>
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

const page = () => `/dashboard/projects/${projectId}/access-audit`;

describe('the Access audit page', () => {
  it('runs an audit, lists its findings with a Repair button, repairs one; the home page counts the open ones', async () => {
    await connectAndLink();
    const plan = { name: 'Monthly', amount: 900, currency: 'EUR', interval: 'month' };
    expect((await call('POST', `/v1/projects/${projectId}/plans`, plan)).status).toBe(201);
    discord.guild(GUILD_ID).members.set(STRANGER, new Set([ROLE_ID]));
    const empty = await get(page());
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toContain('aria-current="page" class="button">Access audit</a>');
    expect(empty.body).toContain('This project has not been audited yet.');

    const started = await post(`${page()}/run`);
    expect(started.statusCode).toBe(202);
    expect(started.body).toContain('The audit started');
    while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);

    const listed = await get(page());
    expect(listed.body).toContain('Role without entitlement');
    expect(listed.body).toContain(`Remove role ${ROLE_ID} from the member.`);
    const [, findingId] = /access-audit\/findings\/([0-9a-f-]{36})\/repair/.exec(listed.body)!;
    const home = await get('/dashboard');
    expect(home.body).toContain(`id="attention-audit-${projectId}"`);
    expect(home.body).toContain('1 open finding of the access audit');

    // Without the session's CSRF token nothing is repaired.
    const forged = await post(`${page()}/findings/${findingId}/repair`, { csrf_token: 'forged' });
    expect(forged.statusCode).toBe(403);
    expect([...discord.guild(GUILD_ID).members.get(STRANGER)!]).toEqual([ROLE_ID]);

    const repaired = await post(`${page()}/findings/${findingId}/repair`);
    expect(repaired.statusCode).toBe(200);
    expect(repaired.body).toContain('The finding was repaired.');
    expect(repaired.body).toContain('repaired</span>');
    expect([...discord.guild(GUILD_ID).members.get(STRANGER)!]).toEqual([]);
    expect((await get('/dashboard')).body).not.toContain(`id="attention-audit-${projectId}"`);
  });

  it('saves the policy and schedule without running an audit', async () => {
    const shown = await get(page());
    expect(shown.body).toContain('<option value="report" selected');
    expect(shown.body).toContain('Next daily audit');
    const saved = await post(`${page()}/settings`, { policy: 'repair', schedule: 'off' });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('The audit settings were saved.');
    expect(saved.body).toContain('<option value="repair" selected');
    expect(saved.body).toContain('<option value="off" selected');
    expect(runtime.auditPages).toEqual([]);
    expect((await call('GET', `/v1/projects/${projectId}/access-audit-settings`)).json).toMatchObject({
      policy: 'repair',
      schedule: 'off',
    });
    const refused = await post(`${page()}/settings`, { policy: 'sometimes' });
    expect(refused.statusCode).toBe(422);
  });
});
