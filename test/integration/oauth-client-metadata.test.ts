/**
 * OAuth Client ID Metadata Documents (DESIGN D30 amended), on DynamoDB Local with a manual clock: a client whose
 * `client_id` is the URL of a document served by a loopback server in the test authorizes, is shown by its name and
 * host on the consent page, gets tokens and calls the tool server; documents naming another `client_id`, redirect
 * URIs they do not list, documents over the size cap and private addresses are refused; documents are cached by
 * `max-age`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_CLIENT_ID_METADATA_DOCUMENT_BYTES } from '../../shared/oauth/client-id-metadata.js';
import { startClientMetadataServer, type ClientMetadataServer } from '../support/client-metadata-server.js';
import {
  clock,
  runtime,
  ownerId,
  ORIGIN,
  REDIRECT,
  sessionOf,
  call,
  dashboard,
  pkce,
  authorizeQuery,
  exchange,
  tokenRequest,
  mcpInitialize,
  useOAuthFixture,
} from '../support/fixtures/oauth.js';

useOAuthFixture();

let documents: ClientMetadataServer;
beforeAll(async () => {
  documents = await startClientMetadataServer();
  runtime.allowPrivateTargets = true;
});
afterAll(async () => {
  await documents.close();
});

let nextIp = 0;
/** An IP of the test's own, so flows never share the per-IP limit. */
const ip = () => `192.0.2.${++nextIp}`;

/** Publishes a valid document at `path` (with `overrides`) and returns its `client_id`. */
function publish(path: string, overrides: Record<string, unknown> = {}, headers?: Record<string, string>): string {
  const clientId = documents.url(path);
  documents.serve(
    path,
    { client_id: clientId, client_name: 'Doc Assistant', redirect_uris: [REDIRECT], ...overrides },
    headers,
  );
  return clientId;
}

async function authorize(clientId: string, extra: Record<string, string> = {}) {
  const { verifier, challenge } = pkce();
  const response = await call(`/oauth/authorize?${authorizeQuery(clientId, challenge, extra)}`, { ip: ip() });
  return { response, verifier, body: await response.text() };
}

describe('client ID metadata documents', () => {
  it('are advertised in the authorization server metadata, with the revocation endpoint', async () => {
    const metadata = await (await call('/.well-known/oauth-authorization-server')).json();
    expect(metadata).toMatchObject({
      client_id_metadata_document_supported: true,
      revocation_endpoint: `${ORIGIN}/oauth/revoke`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
    });
  });

  it('authorize a client named by its document URL: consent shows its name and host, tokens work on /mcp', async () => {
    const clientId = publish('/clients/happy.json', {}, { 'Cache-Control': 'public, max-age=600' });
    const { response, verifier } = await authorize(clientId);
    expect(response.status).toBe(302);
    const consent = new URL(response.headers.get('location')!);
    const cookie = await sessionOf(ownerId);
    const page = await dashboard('GET', `${consent.pathname}${consent.search}`, cookie);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Doc Assistant');
    expect(page.body).toContain(`<span class="mono" id="consent-client-host">${new URL(clientId).host}</span>`);
    const answer = await dashboard('POST', '/dashboard/oauth/authorize', cookie, {
      csrf_token: /name="csrf_token" value="([^"]+)"/.exec(page.body)![1],
      request: consent.searchParams.get('request')!,
      decision: 'allow',
    });
    const back = new URL(answer.headers.Location);
    expect(`${back.origin}${back.pathname}`).toBe(REDIRECT);
    const tokens = await exchange(back.searchParams.get('code')!, clientId, verifier);
    expect(tokens.status).toBe(200);
    expect((await mcpInitialize(tokens.body.access_token)).status).toBe(200);
    const refreshed = await tokenRequest({
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    // Authorize, token and refresh within max-age: one fetch.
    expect(documents.hits('/clients/happy.json')).toBe(1);
  });

  it('are cached for their max-age, then fetched again; no-store is fetched every time', async () => {
    const cached = publish('/clients/cached.json', {}, { 'Cache-Control': 'max-age=120' });
    expect((await authorize(cached)).response.status).toBe(302);
    expect((await authorize(cached)).response.status).toBe(302);
    expect(documents.hits('/clients/cached.json')).toBe(1);
    clock.advance(121_000);
    expect((await authorize(cached)).response.status).toBe(302);
    expect(documents.hits('/clients/cached.json')).toBe(2);
    const uncached = publish('/clients/uncached.json', {}, { 'Cache-Control': 'no-store' });
    await authorize(uncached);
    await authorize(uncached);
    expect(documents.hits('/clients/uncached.json')).toBe(2);
  });

  it('refuse a document naming another client_id, an unlisted redirect URI, and a document over the size cap', async () => {
    const refusedWith = async (clientId: string, pattern: RegExp, extra: Record<string, string> = {}) => {
      const { response, body } = await authorize(clientId, extra);
      expect(response.status, clientId).toBe(400);
      expect(response.headers.get('location'), clientId).toBeNull();
      expect(body, clientId).toMatch(pattern);
    };
    const other = documents.url('/clients/other.json');
    documents.serve('/clients/mismatch.json', { client_id: other, redirect_uris: [REDIRECT] });
    await refusedWith(documents.url('/clients/mismatch.json'), /another client_id/);
    const listed = publish('/clients/listed.json');
    await refusedWith(listed, /redirect_uri is not one/, { redirect_uri: 'http://127.0.0.1:9/elsewhere' });
    const big = publish('/clients/big.json', {
      client_uri: `https://x.example/${'a'.repeat(MAX_CLIENT_ID_METADATA_DOCUMENT_BYTES)}`,
    });
    await refusedWith(big, /larger than/);
    documents.serve('/clients/secret.json', {
      client_id: documents.url('/clients/secret.json'),
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    await refusedWith(documents.url('/clients/secret.json'), /not valid/);
    await refusedWith(documents.url('/clients/missing.json'), /HTTP 404/);
    await refusedWith(`${documents.origin}/clients/../listed.json`, /canonical/);
    const token = await tokenRequest({ grant_type: 'refresh_token', refresh_token: 'x', client_id: other });
    expect(token).toMatchObject({ status: 401, body: { error: 'invalid_client' } });
  });

  it('refuse private addresses and http unless private targets are allowed, without fetching', async () => {
    const clientId = publish('/clients/private.json');
    runtime.allowPrivateTargets = false;
    try {
      const http = await authorize(clientId);
      expect(http.response.status).toBe(400);
      expect(http.body).toMatch(/must use https/);
      const https = await authorize(`https://127.0.0.1:${new URL(documents.origin).port}/clients/private.json`);
      expect(https.response.status).toBe(400);
      expect(https.body).toMatch(/may not be fetched.*non-public targets are refused/);
      const mapped = await authorize('https://10.0.0.1/clients/private.json');
      expect(mapped.body).toMatch(/non-public targets are refused/);
    } finally {
      runtime.allowPrivateTargets = true;
    }
    expect(documents.hits('/clients/private.json')).toBe(0);
  });
});
