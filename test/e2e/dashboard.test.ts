/**
 * The dashboard in a real browser (DESIGN D21): headless Chromium (Debian's `chromium`,
 * `CHROMIUM_PATH` overrides) through playwright-core against the local service in this process, with a
 * virtual passkey authenticator, an HTTPS receiver that checks every signature as the interface tells
 * receivers to, axe-core on the main pages and screenshots under `test-results/dashboard/`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { DEMO_OWNER, type LocalService } from '../../shared/local/service.js';
import { contextWithAuthenticator, expectAccessible, launchChromium, screenshot } from '../support/browser.js';
import { dashboardHarness, until } from '../support/dashboard.js';
import { startTestReceiver, type TestReceiver } from '../support/https-receiver.js';
import { startTestService } from '../support/local-service.js';
import { checkSignature } from '../support/signature.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  type: string;
}

let service: LocalService;
let receiver: TestReceiver;
let browser: Browser;
let answer = 200;
const received: Received[] = [];

beforeAll(async () => {
  receiver = await startTestReceiver((headers, body) => {
    received.push({ headers, body, type: String(headers['svc-event-name'] ?? '') });
    return answer;
  });
  // TIME_SCALE 10: the second attempt comes 1 s after the first; the dual-signing window is 2.4 hours.
  service = await startTestService({ extraCaPem: [receiver.caPem], allowPrivateTargets: true, timeScale: 10 });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await service?.stop();
  await receiver?.close();
});

const { api, dashboard, signInWithLink } = dashboardHarness(
  () => service,
  () => browser,
);

describe('dashboard in Chromium', () => {
  it('signs in with a one-time link, registers a passkey, signs out and back in with it; the cookie is scoped and refused on /v1 and /mcp; CSRF is checked; text is escaped', async () => {
    const page = await signInWithLink(DEMO_OWNER.email);
    const context = page.context();
    expect(page.getByRole('heading', { level: 1 })).toBeTruthy();
    expect(await page.textContent('h1')).toContain(DEMO_OWNER.name);

    const [cookie] = (await context.cookies()).filter((candidate) => candidate.name === 'dashboard_session');
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Strict', path: '/dashboard' });

    // The link was used: it cannot sign anyone in again.
    await screenshot(page, 'home-1440');

    // Sign out, then sign in with the passkey alone.
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(/\/dashboard\/sign-in\?signed_out=1$/);
    await page.goto(dashboard('/webhooks'));
    await page.waitForURL(/\/dashboard\/sign-in\?return_to=%2Fdashboard%2Fwebhooks$/);
    await expectAccessible(page);
    await screenshot(page, 'sign-in');
    await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
    await page.waitForURL(dashboard('/webhooks')); // back to the page that asked for sign-in
    const [renewed] = (await context.cookies()).filter((candidate) => candidate.name === 'dashboard_session');
    expect(renewed.value).not.toBe(cookie.value);

    // The session cookie is never accepted on /v1 or /mcp (bearer tokens only).
    const cookieHeader = `dashboard_session=${renewed.value}`;
    const v1 = await fetch(`${service.baseUrl}/v1/teams/current`, { headers: { Cookie: cookieHeader } });
    expect(v1.status).toBe(401);
    const mcp = await fetch(service.mcpUrl, {
      method: 'POST',
      headers: {
        Cookie: cookieHeader,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(mcp.status).toBe(401);

    // CSRF: a POST with the session cookie but without the session's token changes nothing.
    const before = (await api('GET', '/v1/tokens?limit=100')).body.data.length;
    const forged = await page.evaluate(async () => {
      const response = await fetch('/dashboard/tokens', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'name=forged&preset=full',
      });
      return { status: response.status, body: await response.json() };
    });
    expect(forged.status).toBe(403);
    expect(forged.body.code).toBe('CSRF_TOKEN_INVALID');
    const wrongToken = await fetch(dashboard('/tokens'), {
      method: 'POST',
      redirect: 'manual',
      headers: { Cookie: cookieHeader, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: 'name=forged&preset=full&csrf_token=nope',
    });
    expect(wrongToken.status).toBe(403);
    // A form the browser posts without the session's token: a page that says so (readable at 375 px), not JSON.
    await page.setViewportSize({ width: 375, height: 800 });
    await Promise.all([
      page.waitForURL(dashboard('/tokens')),
      page.evaluate(() => {
        const form = Object.assign(document.createElement('form'), { method: 'post', action: '/dashboard/tokens' });
        form.append(Object.assign(document.createElement('input'), { name: 'csrf_token', value: 'stale' }));
        document.body.append(form);
        form.submit();
      }),
    ]);
    expect(await page.textContent('main')).toContain('did not carry the CSRF token of your session');
    await expectAccessible(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    expect((await api('GET', '/v1/tokens?limit=100')).body.data.length).toBe(before);

    // Text from the data is escaped wherever it is shown.
    const hostile = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    const project = await api('POST', '/v1/projects', { name: hostile, platform_type: 'web' });
    expect(project.status).toBe(201);
    await page.goto(dashboard('/projects'));
    await expect.poll(() => page.getByRole('link', { name: hostile }).count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.content()).toContain('&lt;script&gt;window.__pwned');
    await expectAccessible(page);
    await screenshot(page, 'projects-1440');

    // The same pages at 375 px.
    await page.setViewportSize({ width: 375, height: 800 });
    await page.goto(dashboard('/projects'));
    await screenshot(page, 'projects-375');
    await context.close();
  });

  it('webhooks: new endpoint with its secret once (a double submit creates one), 24-hour rotation signed v1 and v0, retry a dead delivery, replay dead with the count first, re-enable', async () => {
    const page = await signInWithLink(DEMO_OWNER.email);
    answer = 200;
    await page.goto(dashboard('/webhooks'));
    await expectAccessible(page);
    await page.getByRole('link', { name: 'New endpoint' }).click();
    await page.waitForURL(/\/dashboard\/webhooks\/new$/);
    await expectAccessible(page);
    await screenshot(page, 'webhooks-new');
    const name = `Receiver ${crypto.randomUUID().slice(0, 8)}`;
    await page.getByLabel('Name').fill(name);
    await page.getByLabel('URL').fill(receiver.url);
    await page.getByRole('checkbox', { name: /webhook_endpoint\.test/ }).check();
    await page.getByRole('checkbox', { name: /^project\.created/ }).check();
    // Capture the form as submitted, to send it a second time (a double-clicked submit).
    const formBody = await page.evaluate(() =>
      new URLSearchParams(
        new FormData(document.querySelector('form.stack') as HTMLFormElement) as unknown as string,
      ).toString(),
    );
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.waitForURL(/\/dashboard\/webhooks$/);
    const oldSecret = (await page.locator('#endpoint-secret').textContent())!.trim();
    expect(oldSecret).toMatch(/^whsec_/);
    await screenshot(page, 'webhooks-secret-once');
    const cookie = (await page.context().cookies()).find((candidate) => candidate.name === 'dashboard_session')!;
    const again = await fetch(dashboard('/webhooks'), {
      method: 'POST',
      headers: { Cookie: `dashboard_session=${cookie.value}`, 'Content-Type': 'application/x-www-form-urlencoded' },
      body: formBody,
    });
    expect(again.status).toBe(201);
    expect(await again.text()).toContain(oldSecret); // the stored answer, not a second endpoint
    const endpoints = (await api('GET', '/v1/webhook-endpoints?limit=100')).body.data.filter(
      (endpoint: { name: string }) => endpoint.name === name,
    );
    expect(endpoints).toHaveLength(1);
    const endpointId = endpoints[0].id as string;

    // The endpoint's page never shows the secret again.
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    await page.waitForURL(new RegExp(`/dashboard/webhooks/endpoints/${endpointId}$`));
    expect(await page.content()).not.toContain(oldSecret);
    await expectAccessible(page);

    // Rotation from the dashboard: the page says until when; a delivery verifies with the old and the new secret.
    await page.getByRole('button', { name: /Rotate secret/ }).click();
    const newSecret = (await page.locator('#endpoint-secret').textContent())!.trim();
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    expect(await page.locator('#dual-signing').textContent()).toMatch(/until \d{4}-\d\d-\d\d/);
    await screenshot(page, 'webhooks-endpoint-rotated');
    const seen = received.length;
    await page.getByRole('button', { name: 'Send test event' }).click();
    const delivery = await until('the test event after rotation', async () =>
      received.slice(seen).find((item) => item.type === 'webhook_endpoint.test'),
    );
    const header = String(delivery.headers['svc-signature']);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v0=[0-9a-f]{64}$/);
    expect(checkSignature({ header, rawBody: delivery.body, secret: newSecret })).toBeNull();
    expect(checkSignature({ header, rawBody: delivery.body, secret: oldSecret })).toBeNull();
    expect(
      checkSignature({ header: header.replace(/,v0=[0-9a-f]+/, ''), rawBody: delivery.body, secret: oldSecret }),
    ).toBe('signature mismatch');

    // Two deliveries fail once; disabling the endpoint dead-letters them at their next attempt.
    answer = 500;
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByRole('button', { name: 'Send test event' }).click();
    const deliveriesOf = async () =>
      (await api('GET', `/v1/webhook-deliveries?endpoint_id=${endpointId}&limit=100`)).body.data as Array<{
        id: string;
        status: string;
        attempts: number;
      }>;
    await until(
      'two failed first attempts',
      async () => (await deliveriesOf()).filter((item) => item.status === 'pending' && item.attempts >= 1).length >= 2,
    );
    await page.getByRole('button', { name: 'Disable' }).click();
    await expect.poll(() => page.getByRole('button', { name: 'Re-enable' }).count()).toBe(1);
    const dead = await until('two dead deliveries', async () => {
      const items = (await deliveriesOf()).filter((item) => item.status === 'dead');
      return items.length >= 2 ? items : null;
    });

    // Re-enable: active again, failure streak back to 0.
    await page.getByRole('button', { name: 'Re-enable' }).click();
    expect(await page.locator('dl.facts').textContent()).toContain('0 / 20');
    const endpoint = await api('GET', `/v1/webhook-endpoints/${endpointId}`);
    expect(endpoint.body).toMatchObject({ is_active: true, consecutive_failures: 0, disabled_at: null });

    // Retry one dead delivery from its page.
    answer = 200;
    await page.goto(dashboard(`/webhooks/deliveries?status=dead&endpoint_id=${endpointId}`));
    await expectAccessible(page);
    await screenshot(page, 'webhooks-deliveries-dead');
    await page.goto(dashboard(`/webhooks/deliveries/${dead[0].id}`));
    await screenshot(page, 'webhooks-delivery-timeline');
    expect(await page.locator('ol.timeline').textContent()).toMatch(/http_status|endpoint_disabled/);
    await page.getByRole('button', { name: 'Retry' }).click();
    await until('the retried delivery to succeed', async () =>
      (await deliveriesOf()).find((item) => item.id === dead[0].id && item.status === 'succeeded'),
    );

    // Replay dead: the count first, then every one of them.
    await page.goto(dashboard('/webhooks/replay-dead'));
    const count = Number(await page.locator('#replay-count strong').textContent());
    expect(count).toBeGreaterThanOrEqual(1);
    await expectAccessible(page);
    await screenshot(page, 'webhooks-replay-confirm');
    await page.getByRole('button', { name: `Replay all ${count}` }).click();
    expect(Number(await page.locator('#replayed').textContent())).toBe(count);
    await until('the replayed delivery to succeed', async () =>
      (await deliveriesOf()).find((item) => item.id === dead[1].id && item.status === 'succeeded'),
    );

    // Each action is in the activity log, naming the member.
    const owner = (await api('GET', '/v1/team-members?limit=100')).body.data.find(
      (member: { email: string }) => member.email === DEMO_OWNER.email,
    );
    const activity = (await api('GET', `/v1/activity?member_id=${owner.id}&limit=100`)).body.data as Array<{
      operation: string;
      surface: string;
      token_id: string | null;
    }>;
    for (const operation of [
      'createWebhookEndpoint',
      'rotateWebhookEndpointSecret',
      'sendTestWebhookEvent',
      'updateWebhookEndpoint',
      'retryWebhookDelivery',
      'replayDeadWebhookDeliveries',
    ]) {
      expect(
        activity.find((entry) => entry.operation === operation),
        operation,
      ).toMatchObject({ surface: 'dashboard', token_id: null });
    }
    await page.goto(dashboard('/webhooks'));
    await screenshot(page, 'webhooks-list-1440');
    await page.context().close();
  });

  it('tokens: create one within the member’s abilities, see it once, revoke it and see it fail; a viewer sees the webhook actions disabled with the ability named', async () => {
    const page = await signInWithLink(DEMO_OWNER.email);
    await page.goto(dashboard('/tokens/new'));
    await expectAccessible(page);
    const name = `ci ${crypto.randomUUID().slice(0, 8)}`;
    await page.getByLabel('Name').fill(name);
    await page.getByLabel(/Read-only/).check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.locator('#token-secret').textContent())!.trim();
    expect(token).toMatch(/^svc_live_/);
    await screenshot(page, 'tokens-created');
    expect((await api('GET', '/v1/teams/current', undefined, token)).status).toBe(200);
    expect((await api('POST', '/v1/projects', { name: 'not allowed', platform_type: 'web' }, token)).status).toBe(403);

    await page.goto(dashboard('/tokens'));
    await expectAccessible(page);
    await screenshot(page, 'tokens-list');
    expect(await page.content()).not.toContain(token);
    const row = page.getByRole('row', { name: new RegExp(name) });
    await row.getByRole('link', { name: 'Revoke' }).click();
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await page.waitForURL(/\/dashboard\/tokens\?revoked=1$/);
    const refused = await api('GET', '/v1/teams/current', undefined, token);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('AUTHENTICATION_REQUIRED');

    // A viewer (invited from the dashboard) signs in through the invitation link.
    await page.goto(dashboard('/team-members'));
    const email = `viewer-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Name', { exact: true }).fill('Vera Viewer');
    await page.getByLabel('Role', { exact: true }).selectOption({ label: 'viewer' });
    await page.getByRole('button', { name: 'Send invitation' }).click();
    const invitation = (await page.locator('#invitation-link').textContent())!.trim();
    await screenshot(page, 'team-members-invited');
    await page.context().close();

    const { page: viewer } = await contextWithAuthenticator(browser, { width: 375, height: 800 });
    await viewer.goto(invitation);
    await expect.poll(() => viewer.getByLabel('Invitation token').inputValue()).toMatch(/^inv_/);
    await viewer.getByRole('button', { name: 'Accept the invitation' }).click();
    await viewer.waitForURL(/\/dashboard\/passkeys\/new$/);
    await viewer.getByRole('button', { name: 'Register a passkey' }).click();
    await viewer.waitForURL(dashboard());
    await viewer.goto(dashboard('/webhooks'));
    const newEndpoint = viewer.getByRole('button', { name: /New endpoint — needs webhook-endpoint:manage/ });
    expect(await newEndpoint.isDisabled()).toBe(true);
    expect(
      await viewer.getByRole('button', { name: /Replay dead deliveries — needs webhook-delivery:retry/ }).isDisabled(),
    ).toBe(true);
    expect(await viewer.textContent('main')).toContain('needs the ability webhook-endpoint:manage');
    await expectAccessible(viewer);
    await screenshot(viewer, 'webhooks-viewer-375');
    await viewer.context().close();
  });
});
