/**
 * An OAuth grant as one thing (DESIGN D30, D20): revoking any token it issued revokes all of them and its refresh
 * tokens; a code presented again, however concurrently, revokes what the first presentation issued; the exchange
 * narrows the grant to what the member holds then; a billing-locked team gets no new token (402), and its refresh
 * token works again once the invoice is paid.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { markInvoicePaid } from '../../shared/domain/billing/changes.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { updateTeamMember } from '../../shared/domain/team-members/changes.js';
import { acceptTeamInvitation, inviteTeamMember } from '../../shared/domain/team-members/invitations.js';
import { listTokens, revokeToken } from '../../shared/domain/tokens/repository.js';
import { lockTeam } from '../support/billing.js';
import {
  authorizedCode,
  exchange,
  mcpInitialize,
  principal,
  runtime,
  clock,
  teamId,
  tokenRequest,
  useOAuthFixture,
} from '../support/fixtures/oauth.js';

useOAuthFixture();

const refresh = (refreshToken: string, clientId: string, ip: string) =>
  tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId }, ip);

const tokenIdOf = (accessToken: string) => accessToken.split('_')[2];

describe('an OAuth grant', () => {
  it('is one live token: a refresh replaces the earlier access token, and revoking the live one ends the refresh tokens too', async () => {
    const { code, client, verifier, ip } = await authorizedCode();
    const first = (await exchange(code, client.client_id, verifier, ip)).body;
    const second = (await refresh(first.refresh_token, client.client_id, ip)).body;
    expect((await mcpInitialize(second.access_token)).status).toBe(200);
    // The refreshed token replaces the earlier one: the grant is one live token, one row.
    expect((await mcpInitialize(first.access_token)).status).toBe(401);
    const live = (await listTokens(runtime.store, teamId, { limit: 100 })).data.filter(
      (token) =>
        token.name === 'OAuth grant: Test assistant' &&
        [first, second].some(({ access_token }) => tokenIdOf(access_token) === token.id),
    );
    expect(live.map((token) => token.id)).toEqual([tokenIdOf(second.access_token)]);

    await revokeToken(runtime.store, clock, teamId, tokenIdOf(second.access_token));

    expect((await mcpInitialize(second.access_token)).status).toBe(401);
    expect(await refresh(second.refresh_token, client.client_id, ip)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
  });

  it('revokes what a code issued when it is presented again concurrently, whichever presentation won', async () => {
    for (let round = 0; round < 3; round++) {
      const { code, client, verifier, ip } = await authorizedCode();
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => exchange(code, client.client_id, verifier, ip)),
      );
      for (const answer of answers) expect([200, 400]).toContain(answer.status);
      expect(answers.filter((answer) => answer.status === 400).length).toBeGreaterThanOrEqual(5);
      for (const answer of answers.filter((candidate) => candidate.status === 200)) {
        expect((await mcpInitialize(answer.body.access_token)).status).toBe(401);
        expect((await refresh(answer.body.refresh_token, client.client_id, ip)).status).toBe(400);
      }
    }
  });

  it('holds only what the member holds at the exchange: a code approved before a demotion loses the removed ability', async () => {
    const invited = await inviteTeamMember(runtime, principal, {
      email: `developer-${randomUUID()}@example.com`,
      name: 'Developer',
      role_ids: [BUILT_IN_ROLE_IDS.developer],
    });
    await acceptTeamInvitation(runtime, invited.invitation_token);
    const { code, client, verifier, ip } = await authorizedCode({
      memberId: invited.id,
      scope: 'mcp:full project:view-any project:update',
    });
    await updateTeamMember(runtime, principal, invited.id, { role_ids: [BUILT_IN_ROLE_IDS.analyst] });

    const issued = await exchange(code, client.client_id, verifier, ip);
    expect(issued.status).toBe(200);
    expect(issued.body.scope.split(' ').sort()).toEqual(['mcp:full', 'project:view-any']);
  });

  it('issues nothing while the team is billing-locked (402), and the same refresh token works once the invoice is paid', async () => {
    const { code, client, verifier, ip } = await authorizedCode();
    const issued = (await exchange(code, client.client_id, verifier, ip)).body;
    const locked = await authorizedCode();
    const invoice = await lockTeam(runtime, teamId);
    try {
      expect(await refresh(issued.refresh_token, client.client_id, ip)).toMatchObject({
        status: 402,
        body: { error_description: expect.stringContaining('locked') },
      });
      expect(await exchange(locked.code, locked.client.client_id, locked.verifier, locked.ip)).toMatchObject({
        status: 402,
      });
    } finally {
      await markInvoicePaid(runtime, teamId, invoice.id);
    }
    const renewed = await refresh(issued.refresh_token, client.client_id, ip);
    expect(renewed.status).toBe(200);
    expect((await mcpInitialize(renewed.body.access_token)).status).toBe(200);
  });
});
