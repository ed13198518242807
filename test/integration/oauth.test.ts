/**
 * The tool server's OAuth 2.1 authorization server (DESIGN D30), through the tool server's API handler and
 * the dashboard's consent page on DynamoDB Local with a manual clock: RFC 8414 and RFC 9728 metadata,
 * RFC 7591 registration refusals, authorization refusals (no open redirect, PKCE S256 only, RFC 8707
 * resource), single-use 60-second codes, PKCE verification, rotating refresh tokens whose reuse revokes
 * the family, expiring access tokens on `/mcp`, consent narrowed to the member's abilities, dashboard
 * revocation and the per-IP rate limit.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { AUTHORIZATION_CODE_LIFETIME_MS } from '../../shared/oauth/authorization-requests.js';
import { ACCESS_TOKEN_LIFETIME_MS, REFRESH_TOKEN_LIFETIME_MS } from '../../shared/oauth/grants.js';
import { keys } from '../../shared/store/keys.js';

import {
  clock,
  runtime,
  teamId,
  ownerId,
  analystId,
  projectId,
  ORIGIN,
  REDIRECT,
  sessionOf,
  call,
  dashboard,
  register,
  pkce,
  authorizeQuery,
  authorizedCode,
  tokenRequest,
  exchange,
  mcpInitialize,
  useOAuthFixture,
} from '../support/fixtures/oauth.js';

useOAuthFixture();

describe('metadata', () => {
  it('serves RFC 8414 authorization server metadata and names the server in the RFC 9728 metadata', async () => {
    const metadata = await (await call('/.well-known/oauth-authorization-server')).json();
    expect(metadata).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      response_types_supported: ['code'],
      code_challenge_methods_supported: ['S256'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['none'],
    });
    expect(metadata.scopes_supported).toContain('mcp:full');
    const resource = await (await call('/.well-known/oauth-protected-resource/mcp')).json();
    expect(resource).toMatchObject({ resource: `${ORIGIN}/mcp`, authorization_servers: [ORIGIN] });
  });
});

describe('registration', () => {
  it('registers a public client (201) and refuses confidential clients and unsafe redirect URIs', async () => {
    const created = await register({}, '198.51.100.2');
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({
      client_id: expect.any(String),
      client_id_issued_at: expect.any(Number),
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      client_name: 'Test assistant',
    });
    for (const redirect of [
      'http://example.com/cb',
      'javascript:alert(1)',
      'https://ok.example/cb#frag',
      'http://10.0.0.1/cb',
    ]) {
      const refused = await register({ redirect_uris: [redirect] }, '198.51.100.2');
      expect(refused.status, redirect).toBe(400);
      expect((await refused.json()).error, redirect).toMatch(/^invalid_(redirect_uri|client_metadata)$/);
    }
    expect(
      await (
        await register(
          { redirect_uris: ['https://ok.example/cb', 'http://[::1]:9/cb', 'http://localhost/cb'] },
          '198.51.100.2',
        )
      ).json(),
    ).toMatchObject({ client_id: expect.any(String) });
    const confidential = await register({ token_endpoint_auth_method: 'client_secret_basic' }, '198.51.100.2');
    expect(confidential.status).toBe(400);
    expect(await confidential.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });
});

describe('authorization refusals', () => {
  it('answers an unknown client or redirect URI with a page, never a redirect; redirects back for plain PKCE, a wrong resource or an unknown scope', async () => {
    const ip = '198.51.100.3';
    const client = await (await register({}, ip)).json();
    const { challenge } = pkce();
    const unknownClient = await call(`/oauth/authorize?${authorizeQuery(randomUUID(), challenge)}`, { ip });
    expect(unknownClient.status).toBe(400);
    expect(unknownClient.headers.get('location')).toBeNull();
    expect(unknownClient.headers.get('content-type')).toContain('text/html');
    const otherRedirect = await call(
      `/oauth/authorize?${authorizeQuery(client.client_id, challenge, { redirect_uri: 'https://evil.example/cb' })}`,
      { ip },
    );
    expect(otherRedirect.status).toBe(400);
    expect(otherRedirect.headers.get('location')).toBeNull();

    const back = async (extra: Record<string, string>) => {
      const response = await call(`/oauth/authorize?${authorizeQuery(client.client_id, challenge, extra)}`, { ip });
      expect(response.status).toBe(302);
      return new URL(response.headers.get('location')!);
    };
    const plain = await back({ code_challenge_method: 'plain' });
    expect(`${plain.origin}${plain.pathname}`).toBe(REDIRECT);
    expect(plain.searchParams.get('error')).toBe('invalid_request');
    expect(plain.searchParams.get('state')).toBe('xyz');
    const missing = new URL(
      (
        await call(
          `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, state: 's' })}`,
          { ip },
        )
      ).headers.get('location')!,
    );
    expect(missing.searchParams.get('error')).toBe('invalid_request');
    expect((await back({ resource: 'https://other.example/mcp' })).searchParams.get('error')).toBe('invalid_target');
    expect((await back({ scope: 'mcp:full root:everything' })).searchParams.get('error')).toBe('invalid_scope');
  });

  it('sends a member without a dashboard session to sign in and back to the consent page', async () => {
    const ip = '198.51.100.4';
    const client = await (await register({}, ip)).json();
    const consent = new URL(
      (await call(`/oauth/authorize?${authorizeQuery(client.client_id, pkce().challenge)}`, { ip })).headers.get(
        'location',
      )!,
    );
    const signIn = await dashboard('GET', `${consent.pathname}${consent.search}`, 'dss_nothing');
    expect(signIn.statusCode).toBe(303);
    const location = new URL(signIn.headers.Location, ORIGIN);
    expect(location.pathname).toBe('/dashboard/sign-in');
    expect(location.searchParams.get('return_to')).toBe(`${consent.pathname}${consent.search}`);
    const page = await dashboard('GET', `${location.pathname}${location.search}`, 'dss_nothing');
    expect(page.body).toContain(`data-return-to="${consent.pathname}${consent.search}"`);
    const offSite = await dashboard('GET', '/dashboard/sign-in?return_to=//evil.example/x', 'dss_nothing');
    expect(offSite.body).toContain('data-return-to="/dashboard"');
  });

  it('Deny redirects with access_denied and the state', async () => {
    const ip = '198.51.100.5';
    const client = await (await register({}, ip)).json();
    const consent = new URL(
      (await call(`/oauth/authorize?${authorizeQuery(client.client_id, pkce().challenge)}`, { ip })).headers.get(
        'location',
      )!,
    );
    const ownerCookie = await sessionOf(ownerId);
    const page = await dashboard('GET', `${consent.pathname}${consent.search}`, ownerCookie);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)![1];
    const denied = await dashboard('POST', '/dashboard/oauth/authorize', ownerCookie, {
      csrf_token: csrf,
      request: consent.searchParams.get('request')!,
      decision: 'deny',
    });
    const back = new URL(denied.headers.Location);
    expect(back.searchParams.get('error')).toBe('access_denied');
    expect(back.searchParams.get('state')).toBe('xyz');
    expect(back.searchParams.get('code')).toBeNull();
  });
});

describe('tokens', () => {
  it('a code works once, within 60 seconds, with the right PKCE verifier, client and redirect URI', async () => {
    const first = await authorizedCode();
    const wrongVerifier = await exchange(first.code, first.client.client_id, pkce().verifier, first.ip);
    expect(wrongVerifier).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect(await exchange(first.code, first.client.client_id, first.verifier, first.ip)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    }); // used up by the failed attempt

    const second = await authorizedCode();
    const issued = await exchange(second.code, second.client.client_id, second.verifier, second.ip);
    expect(issued).toMatchObject({
      status: 200,
      body: {
        token_type: 'Bearer',
        expires_in: 3600,
        access_token: expect.stringMatching(/^svc_live_/),
        refresh_token: expect.stringMatching(/^ort_/),
      },
    });
    expect(JSON.stringify(await runtime.store.get(keys.oauthCode(second.code.split('_')[1])))).not.toContain(
      second.code.split('_')[2],
    );
    expect(await exchange(second.code, second.client.client_id, second.verifier, second.ip)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    // A replayed code revoked what it issued.
    expect((await mcpInitialize(issued.body.access_token)).status).toBe(401);

    const late = await authorizedCode();
    clock.advance(AUTHORIZATION_CODE_LIFETIME_MS + 1);
    expect(await exchange(late.code, late.client.client_id, late.verifier, late.ip)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: expect.stringContaining('expired') },
    });

    const other = await authorizedCode();
    expect(
      await tokenRequest(
        {
          grant_type: 'authorization_code',
          code: other.code,
          client_id: other.client.client_id,
          redirect_uri: 'http://127.0.0.1:1/other',
          code_verifier: other.verifier,
        },
        other.ip,
      ),
    ).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await tokenRequest({ grant_type: 'password', client_id: other.client.client_id }, other.ip)).toMatchObject({
      status: 400,
      body: { error: 'unsupported_grant_type' },
    });
    expect(
      await tokenRequest({ grant_type: 'authorization_code', client_id: randomUUID(), code: 'x' }, other.ip),
    ).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });

  it('issues a D2 access token that opens /mcp for an hour, then gets 401 with the resource metadata challenge', async () => {
    const { code, client, verifier, ip } = await authorizedCode();
    const issued = await exchange(code, client.client_id, verifier, ip);
    const ok = await mcpInitialize(issued.body.access_token);
    expect(ok.status).toBe(200);
    clock.advance(ACCESS_TOKEN_LIFETIME_MS);
    const expired = await mcpInitialize(issued.body.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect((await expired.json()).code).toBe('AUTHENTICATION_REQUIRED');
    const entries = await listActivity(runtime.store, teamId, { limit: 100, operation: 'oauthAuthorizationCodeGrant' });
    expect(entries.data.length).toBeGreaterThan(0);
  });

  it('rotates refresh tokens; a spent one revokes the whole family and its access tokens', async () => {
    const { code, client, verifier, ip } = await authorizedCode();
    const first = (await exchange(code, client.client_id, verifier, ip)).body;
    const second = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client_id },
      ip,
    );
    expect(second).toMatchObject({
      status: 200,
      body: { access_token: expect.stringMatching(/^svc_live_/), refresh_token: expect.stringMatching(/^ort_/) },
    });
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await mcpInitialize(second.body.access_token)).status).toBe(200);
    expect(
      (await listActivity(runtime.store, teamId, { limit: 100, operation: 'oauthRefreshTokenGrant' })).data.length,
    ).toBeGreaterThan(0);

    const reused = await tokenRequest(
      { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: client.client_id },
      ip,
    );
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await mcpInitialize(second.body.access_token)).status).toBe(401);
    expect((await mcpInitialize(first.access_token)).status).toBe(401);
    expect(
      await tokenRequest(
        { grant_type: 'refresh_token', refresh_token: second.body.refresh_token, client_id: client.client_id },
        ip,
      ),
    ).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
  });

  it('a refresh token expires after 30 days', async () => {
    const { code, client, verifier, ip } = await authorizedCode();
    const issued = (await exchange(code, client.client_id, verifier, ip)).body;
    clock.advance(REFRESH_TOKEN_LIFETIME_MS);
    expect(
      await tokenRequest(
        { grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: client.client_id },
        ip,
      ),
    ).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant', error_description: expect.stringContaining('expired') },
    });
  });

  it('consent never grants an ability the member lacks', async () => {
    const { code, client, verifier, ip, page } = await authorizedCode({
      memberId: analystId,
      scope: 'mcp:full project:view-any project:create token:create',
    });
    expect(page).toContain('project:view-any');
    expect(page).not.toContain('<code>project:create</code>');
    const issued = await exchange(code, client.client_id, verifier, ip);
    expect(issued.body.scope.split(' ').sort()).toEqual(['mcp:full', 'project:view-any']);
  });

  it('narrows the token to the project chosen on the consent page, also after a refresh', async () => {
    const { code, client, verifier, ip, page } = await authorizedCode({ projectId });
    expect(page).toContain('Book club');
    const issued = (await exchange(code, client.client_id, verifier, ip)).body;
    const scopes = async (accessToken: string) =>
      (await runtime.store.get(keys.token(accessToken.split('_')[2])))!.scopes;
    expect(await scopes(issued.access_token)).toEqual([`scope:team:${teamId}`, `scope:project:${projectId}`]);
    const refreshed = (
      await tokenRequest(
        { grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: client.client_id },
        ip,
      )
    ).body;
    expect(await scopes(refreshed.access_token)).toEqual([`scope:team:${teamId}`, `scope:project:${projectId}`]);
  });

  it('lists the grant on the dashboard as "OAuth grant: <client>", and revoking it there ends the refresh family', async () => {
    const { code, client, verifier, ip } = await authorizedCode();
    const issued = (await exchange(code, client.client_id, verifier, ip)).body;
    const ownerCookie = await sessionOf(ownerId);
    const tokens = await dashboard('GET', '/dashboard/tokens', ownerCookie);
    expect(tokens.body).toContain('OAuth grant: Test assistant');
    const tokenId = issued.access_token.split('_')[2];
    const confirm = await dashboard('GET', `/dashboard/tokens/${tokenId}/revoke`, ownerCookie);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(confirm.body)![1];
    expect(
      (await dashboard('POST', `/dashboard/tokens/${tokenId}/revoke`, ownerCookie, { csrf_token: csrf })).statusCode,
    ).toBe(303);
    expect((await mcpInitialize(issued.access_token)).status).toBe(401);
    expect(
      await tokenRequest(
        { grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: client.client_id },
        ip,
      ),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});

describe('rate limit', () => {
  it('limits /oauth/* per client IP (429 with Retry-After), not the metadata', async () => {
    const ip = '198.51.100.99';
    let last: Response | undefined;
    for (let index = 0; index < 31; index++)
      last = await call('/oauth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=x',
        ip,
      });
    expect(last!.status).toBe(429);
    expect(last!.headers.get('retry-after')).toMatch(/^\d+$/);
    expect((await call('/.well-known/oauth-authorization-server', { ip })).status).toBe(200);
    expect((await register({}, '198.51.100.98')).status).toBe(201);
  });
});
