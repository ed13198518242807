/**
 * The pure guards of the tool server's OAuth flow (DESIGN D30): which redirect URIs a public client may
 * register (https, or http on a loopback host), which `return_to` paths the dashboard sign-in follows
 * (same-origin dashboard paths only: no open redirect), and when a stored token has expired.
 */
import { describe, expect, it } from 'vitest';
import { checkToken, sha256 } from '../../shared/auth/principal.js';
import { safeReturnPath } from '../../shared/dashboard/http.js';
import { isAllowedRedirectUri } from '../../shared/oauth/clients.js';

describe('isAllowedRedirectUri', () => {
  it('allows https and loopback http, and nothing else', () => {
    for (const uri of [
      'https://chat.example/callback',
      'http://127.0.0.1:6274/cb',
      'http://[::1]/cb',
      'http://localhost:33418/oauth/callback',
    ])
      expect(isAllowedRedirectUri(uri), uri).toBe(true);
    for (const uri of [
      'http://chat.example/cb',
      'http://127.0.0.2/cb',
      'javascript:alert(1)',
      'data:text/html,x',
      'custom-app:/cb',
      'https://chat.example/cb#fragment',
      'not a url',
      'http://localhost.evil.example/cb',
    ]) {
      expect(isAllowedRedirectUri(uri), uri).toBe(false);
    }
  });
});

describe('safeReturnPath', () => {
  it('keeps dashboard paths and refuses anything that could leave the dashboard', () => {
    for (const path of [
      '/dashboard',
      '/dashboard/webhooks',
      '/dashboard/oauth/authorize?request=8f1c7f6e-0c7b-4c53-9d5e-0e1f2a3b4c5d',
    ])
      expect(safeReturnPath(path), path).toBe(path);
    for (const path of [
      null,
      '',
      'https://evil.example/dashboard',
      '//evil.example',
      '/dashboard//evil.example',
      '/dashboardx',
      '/v1/tokens',
      '/dashboard/\\evil',
      '/dashboard/a\nb',
      '/dashboard/sign-in?return_to=/dashboard',
      `/dashboard/${'a'.repeat(2000)}`,
    ]) {
      expect(safeReturnPath(path), String(path)).toBeNull();
    }
  });
});

describe('checkToken expiry', () => {
  const secret = 'A'.repeat(44);
  const teamId = '0b7f7c0e-6d1b-4f3e-9a51-6a7f0c3b2f11';
  const item = {
    id: '01J0000000000000000000000A',
    team_id: teamId,
    abilities: ['mcp:full'],
    scopes: [`scope:team:${teamId}`],
    secret_sha256: sha256(secret).toString('hex'),
  };

  it('refuses a token at its expires_at_ms with AUTHENTICATION_REQUIRED and WWW-Authenticate; a token without one never expires', () => {
    expect(checkToken({ ...item, expires_at_ms: 1_000 }, secret, undefined, 999)).toMatchObject({ ok: true });
    const expired = checkToken({ ...item, expires_at_ms: 1_000 }, secret, undefined, 1_000);
    expect(expired).toMatchObject({ ok: false, holder: { id: item.id, teamId } });
    if (!expired.ok)
      expect(expired.error).toMatchObject({
        code: 'AUTHENTICATION_REQUIRED',
        headers: { 'WWW-Authenticate': expect.stringMatching(/^Bearer/) },
      });
    expect(checkToken(item, secret, undefined, Number.MAX_SAFE_INTEGER)).toMatchObject({ ok: true });
  });
});
