/**
 * A hosted MCP client's OAuth flow end to end (DESIGN D30): the MCP SDK's own OAuth support
 * (`StreamableHTTPClientTransport` with an `OAuthClientProvider`) discovers the authorization server from
 * the tool server's 401, registers itself, sends the team member to `/oauth/authorize` — driven here in
 * headless Chromium, signed in to the dashboard with a virtual passkey — receives the code on its loopback
 * redirect URI, exchanges it, and lists and calls tools with the issued token. A member who is signed out
 * signs in with their passkey and comes back to the consent page (`return_to`).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { DEMO_OWNER, type LocalService } from '../../shared/local/service.js';
import { launchChromium } from '../support/browser.js';
import { dashboardHarness } from '../support/dashboard.js';
import { startTestService } from '../support/local-service.js';

let service: LocalService;
let browser: Browser;
/** The client's loopback redirect URI, served by {@link callbackServer} as a native client's listener would be. */
let redirectUrl: string;
/** The URLs the browser was sent back to, in order (a browser's own requests, such as its favicon's, left out). */
const callbacks: URL[] = [];
const callbackServer = createServer((request, response) => {
  const url = new URL(request.url ?? '/', redirectUrl);
  if (url.pathname === new URL(redirectUrl).pathname) callbacks.push(url);
  response.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
});

beforeAll(async () => {
  service = await startTestService();
  browser = await launchChromium();
  await new Promise<void>((resolve) => callbackServer.listen(0, '127.0.0.1', resolve));
  redirectUrl = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  callbackServer.close();
});

const { signInWithLink } = dashboardHarness(
  () => service,
  () => browser,
);

/** An in-memory OAuth client of the MCP SDK, as a hosted assistant keeps one per user. */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  issued: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly redirectUrl = redirectUrl;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'E2E assistant',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }
  tokens() {
    return this.issued;
  }
  saveTokens(tokens: OAuthTokens) {
    this.issued = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('MCP SDK client OAuth against the local server', () => {
  it('discovers, registers, gets consent in the browser, exchanges the code and calls tools', async () => {
    // The client dials 127.0.0.1; the consent page is on the dashboard's `localhost` (passkeys need a host name).
    const mcpUrl = new URL(service.mcpUrl);
    const page = await signInWithLink(DEMO_OWNER.email);
    const provider = new MemoryProvider();

    const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
    await expect(new Client({ name: 'e2e', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(
      UnauthorizedError,
    );
    expect(provider.client?.client_id).toEqual(expect.any(String));
    expect(provider.authorizationUrl?.href).toContain(`${mcpUrl.origin}/oauth/authorize?`);
    expect(provider.authorizationUrl?.searchParams.get('code_challenge_method')).toBe('S256');

    // Signed out, the member signs in with the passkey and comes back to the consent page.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in\?signed_out=1$/);
    await page.goto(provider.authorizationUrl!.href);
    await page.waitForURL(/\/dashboard\/sign-in\?return_to=/);
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(/\/dashboard\/oauth\/authorize\?request=/);
    expect(await page.textContent('#consent')).toContain('E2E assistant');
    // Grouped by object, so the decision stays in view at 1280 × 800 even for every ability.
    expect(await page.textContent('#consent-abilities')).toMatch(/mcp:\s*full/);
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(
      await page.getByRole('button', { name: 'Allow' }).evaluate((button) => button.getBoundingClientRect().bottom),
    ).toBeLessThanOrEqual(800);
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${redirectUrl}**`);
    expect(await page.textContent('body')).toBe('You can close this window.');
    const callback = callbacks.at(-1);
    expect(callback?.searchParams.get('code')).toMatch(/^oac_/);

    await first.finishAuth(callback!.searchParams.get('code')!);
    expect(provider.issued).toMatchObject({
      token_type: expect.stringMatching(/^bearer$/i),
      access_token: expect.stringMatching(/^svc_live_/),
      refresh_token: expect.stringMatching(/^ort_/),
    });

    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
    const tools = await client.listTools();
    expect(tools.tools.map((tool) => tool.name)).toContain('list_projects');
    const called = await client.callTool({ name: 'list_projects', arguments: {} });
    expect(called.isError).toBeFalsy();
    expect((called.structuredContent as { data: unknown[] }).data.length).toBeGreaterThan(0);
    await client.close();

    // The grant is listed on the API tokens page.
    await page.goto(new URL('/dashboard/tokens', service.dashboardUrl).href);
    expect(await page.textContent('#tokens')).toContain('OAuth grant: E2E assistant');
  });
});
