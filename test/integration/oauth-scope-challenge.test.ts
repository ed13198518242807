/**
 * Scope challenges and incremental consent (DESIGN D30 amended), on DynamoDB Local: a tool call of an OAuth token
 * refused for an ability it lacks answers 403 with `WWW-Authenticate: Bearer error="insufficient_scope"` naming the
 * scope, keeping the tool's problem result; authorizing the same client again for that scope adds it to the grant,
 * whose earlier abilities and refresh token keep working. Static tokens keep their answers.
 */
import { describe, expect, it } from 'vitest';
import { mintToken } from '../../shared/domain/tokens/repository.js';
import { keys } from '../../shared/store/keys.js';
import {
  clock,
  runtime,
  teamId,
  call,
  authorizedCode,
  exchange,
  tokenRequest,
  mcpInitialize,
  useOAuthFixture,
} from '../support/fixtures/oauth.js';

useOAuthFixture();

let nextId = 10;
/** Opens a session with `token` and calls tool `name`; the raw answer. */
async function callTool(token: string, name: string): Promise<{ status: number; challenge: string | null; body: any }> {
  const initialized = await mcpInitialize(token);
  expect(initialized.status).toBe(200);
  const response = await call('/mcp', {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`,
      'MCP-Session-Id': initialized.headers.get('mcp-session-id')!,
      'MCP-Protocol-Version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++nextId, method: 'tools/call', params: { name, arguments: {} } }),
    ip: `198.51.100.${nextId}`,
  });
  return { status: response.status, challenge: response.headers.get('www-authenticate'), body: await response.json() };
}

describe('insufficient_scope', () => {
  it('answers 403 with the challenge for an OAuth token, and re-authorization adds the scope to the grant', async () => {
    const first = await authorizedCode({ scope: 'mcp:full project:view-any' });
    const tokens = (await exchange(first.code, first.client.client_id, first.verifier, first.ip)).body;
    expect((await callTool(tokens.access_token, 'list_projects')).status).toBe(200);
    const refused = await callTool(tokens.access_token, 'list_subscribers');
    expect(refused.status).toBe(403);
    expect(refused.challenge).toMatch(
      /^Bearer error="insufficient_scope", scope="mcp:full project-user:view-any", resource_metadata="https:\/\/mcp\.test\/\.well-known\/oauth-protected-resource\/mcp"$/,
    );
    // The body is still the tool's refusal: an isError result carrying the TOKEN_MISSING_ABILITY problem.
    expect(refused.body.result).toMatchObject({ isError: true, structuredContent: { code: 'TOKEN_MISSING_ABILITY' } });

    const scope = /scope="([^"]+)"/.exec(refused.challenge!)![1];
    const again = await authorizedCode({ scope, client: first.client, ip: first.ip });
    const wider = await exchange(again.code, first.client.client_id, again.verifier, first.ip);
    expect(wider.body.scope.split(' ').sort()).toEqual(['mcp:full', 'project-user:view-any', 'project:view-any']);
    expect((await callTool(wider.body.access_token, 'list_subscribers')).status).toBe(200);
    expect((await callTool(wider.body.access_token, 'list_projects')).status).toBe(200);
    // The same grant: the first refresh token still works and carries the added scope; the earlier access token was
    // replaced.
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token,
      client_id: first.client.client_id,
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.scope.split(' ')).toContain('project-user:view-any');
    expect((await mcpInitialize(tokens.access_token)).status).toBe(401);
  });

  it('challenges the mcp:full gate of an OAuth token; static tokens keep their answers', async () => {
    const staticToken = await mintToken(runtime.store, clock, {
      teamId,
      abilities: ['mcp:full', 'project:view-any'],
      name: 'static',
    });
    const refused = await callTool(staticToken.token, 'list_subscribers');
    expect(refused.status).toBe(200);
    expect(refused.challenge).toBeNull();
    expect(refused.body.result).toMatchObject({ isError: true, structuredContent: { code: 'TOKEN_MISSING_ABILITY' } });

    const first = await authorizedCode({ scope: 'mcp:full project:view-any' });
    const tokens = (await exchange(first.code, first.client.client_id, first.verifier, first.ip)).body;
    const grantId = (await runtime.store.get(keys.token(tokens.access_token.split('_')[2])))?.oauth_grant_id;
    expect(grantId).toEqual(expect.any(String));
    const gateless = await mintToken(runtime.store, clock, {
      teamId,
      abilities: ['project:view-any'],
      oauthGrantId: grantId as string,
    });
    const gate = await mcpInitialize(gateless.token);
    expect(gate.status).toBe(403);
    expect(gate.headers.get('www-authenticate')).toMatch(/^Bearer error="insufficient_scope", scope="mcp:full"/);
    expect((await gate.json()).code).toBe('TOKEN_MISSING_ABILITY');
  });
});
