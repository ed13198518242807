/**
 * The dashboard's activity log (`GET /dashboard/activity`): the team's entries through `listActivity`, narrowed by the
 * filter form, whose surface field offers every surface and keeps the chosen one; a surface that does not exist is
 * refused as the API refuses it (422). Against DynamoDB Local.
 */
import { describe, expect, it } from 'vitest';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { dashboardEvent, rest, tool } from '../support/calls.js';
import { world } from '../support/fixtures/dashboard.js';

describe('the activity log page', () => {
  it('filters by surface: the form lists every surface and keeps the chosen one', async () => {
    const { clock, runtime, team, owner, token, principal } = await world();
    const created = await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token,
      body: { name: 'Club', platform_type: 'web' },
    });
    expect(created.status).toBe(201);
    expect((await tool(runtime, principal, 'list_projects')).isError).toBeUndefined();
    const { cookieValue } = await createSession(runtime.store, clock, {
      teamId: team.id,
      memberId: owner.id,
      state: 'active',
      method: 'passkey',
    });
    const get = (path: string) => handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }));

    const all = await get('/dashboard/activity');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain('<code>createProject</code>');
    expect(all.body).toContain('<code>list_projects</code>');
    for (const surface of ['rest', 'mcp', 'dashboard', 'portal', 'hook', 'operator'])
      expect(all.body).toContain(`<option value="${surface}">${surface}</option>`);

    const mcp = await get('/dashboard/activity?surface=mcp');
    expect(mcp.statusCode).toBe(200);
    expect(mcp.body).toContain('<code>list_projects</code>');
    expect(mcp.body).not.toContain('<code>createProject</code>');
    expect(mcp.body).toMatch(/<option value="mcp" selected(="")?>mcp<\/option>/);

    expect((await get('/dashboard/activity?surface=fax')).statusCode).toBe(422); // VALIDATION_FAILED, as over REST
  });
});
