/**
 * RFC 7009 token revocation at `POST /oauth/revoke` (DESIGN D30), on DynamoDB Local: a refresh token or an access token
 * ends the whole grant; unknown, malformed and static tokens answer 200 and change nothing; a token of another client
 * is refused; the request is form-encoded and names a token.
 */
import { describe, expect, it } from 'vitest';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { mintToken } from '../../shared/domain/tokens/repository.js';
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

async function revoke(form: Record<string, string>, contentType = 'application/x-www-form-urlencoded') {
  const response = await call('/oauth/revoke', {
    method: 'POST',
    headers: { 'Content-Type': contentType },
    body: new URLSearchParams(form).toString(),
    ip: '198.51.100.77',
  });
  return { status: response.status, text: await response.text() };
}

/** A fresh grant: its client id, access token and refresh token. */
async function grant() {
  const { client, code, verifier, ip } = await authorizedCode();
  const tokens = await exchange(code, client.client_id, verifier, ip);
  expect(tokens.status).toBe(200);
  return { clientId: client.client_id as string, access: tokens.body.access_token, refresh: tokens.body.refresh_token };
}

const refresh = (clientId: string, refreshToken: string) =>
  tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });

describe('POST /oauth/revoke', () => {
  it('revokes the grant of a refresh token: the refresh token and its access token stop working', async () => {
    const { clientId, access, refresh: refreshToken } = await grant();
    expect(await revoke({ token: refreshToken, token_type_hint: 'refresh_token', client_id: clientId })).toEqual({
      status: 200,
      text: '',
    });
    expect((await refresh(clientId, refreshToken)).body.error).toBe('invalid_grant');
    expect((await mcpInitialize(access)).status).toBe(401);
    // Revoking again is harmless.
    expect((await revoke({ token: refreshToken, client_id: clientId })).status).toBe(200);
    const activity = await listActivity(runtime.store, teamId, { limit: 100, operation: 'oauthRevokeToken' });
    expect(activity.data.some((entry) => entry.outcome === 'ok')).toBe(true);
  });

  it('revokes the grant of an access token, whatever the hint says', async () => {
    const { clientId, access, refresh: refreshToken } = await grant();
    expect((await revoke({ token: access, token_type_hint: 'refresh_token' })).status).toBe(200);
    expect((await mcpInitialize(access)).status).toBe(401);
    expect((await refresh(clientId, refreshToken)).body.error).toBe('invalid_grant');
  });

  it('answers 200 for unknown, malformed and static tokens and changes nothing', async () => {
    const { clientId, access, refresh: refreshToken } = await grant();
    const wrongSecret = refreshToken.replace(/.$/, (last: string) => (last === 'a' ? 'b' : 'a'));
    const staticToken = await mintToken(runtime.store, clock, { teamId, abilities: ['mcp:full'], name: 'static' });
    for (const token of ['nonsense', wrongSecret, `${access}x`, staticToken.token])
      expect((await revoke({ token })).status, token).toBe(200);
    expect((await mcpInitialize(staticToken.token)).status).toBe(200);
    expect((await refresh(clientId, refreshToken)).status).toBe(200);
  });

  it('refuses a token of another client (401 invalid_client), a missing token and a non-form body (400)', async () => {
    const { access } = await grant();
    const other = await revoke({ token: access, client_id: 'another-client' });
    expect(other.status).toBe(401);
    expect(JSON.parse(other.text)).toMatchObject({ error: 'invalid_client' });
    expect((await mcpInitialize(access)).status).toBe(200);
    const missing = await revoke({});
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.text)).toMatchObject({ error: 'invalid_request' });
    expect((await revoke({ token: access }, 'application/json')).status).toBe(400);
    const get = await call('/oauth/revoke', { ip: '198.51.100.78' });
    expect(get.status).toBe(405);
  });
});
