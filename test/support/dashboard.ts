/**
 * The dashboard browser tests' shared steps (DESIGN D21): REST calls with the demo token,
 * dashboard URLs, a member signed in through a fresh one-time link with a newly registered passkey, the
 * page's CSRF token, and waiting for a condition. The service and browser are read when a step runs, so
 * a test file can build the harness before its `beforeAll` starts them.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, vi } from 'vitest';
import { systemClock } from '../../shared/clock.js';
import { createSignInLink } from '../../shared/domain/team-members/sessions.js';
import type { LocalService } from '../../shared/local/service.js';
import { contextWithAuthenticator, launchChromium } from './browser.js';
import { startTestService } from './local-service.js';
import { startFakeBotApi, type FakeBotApi } from './telegram-bot-api.js';

/** A REST answer: status and parsed JSON body (null when empty). */
export interface ApiAnswer {
  status: number;
  body: any;
}

/** The steps, bound to the test file's service and browser (read at call time). */
export function dashboardHarness(getService: () => LocalService, getBrowser: () => Browser) {
  /** REST with `token` (default: the demo token, every ability); writes carry a fresh Idempotency-Key. */
  async function api(method: string, path: string, body?: unknown, token = getService().demoToken): Promise<ApiAnswer> {
    const response = await fetch(`${getService().baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        ...(method === 'GET' ? {} : { 'Idempotency-Key': crypto.randomUUID() }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  }

  /** The dashboard URL of `path` (e.g. `/webhooks`). */
  const dashboard = (path = '') => `${getService().dashboardUrl}${path}`;

  /**
   * Opens a fresh one-time sign-in link of `email` in a new context and registers a passkey; returns the signed-in
   * page.
   */
  async function signInWithLink(email: string, viewport?: { width: number; height: number }): Promise<Page> {
    const service = getService();
    const { page } = await contextWithAuthenticator(getBrowser(), viewport);
    const link = await createSignInLink(service.store, systemClock, service.demoTeamId, email);
    await page.goto(`${service.dashboardUrl.replace(/\/dashboard$/, '')}${link.path}`);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL(/\/dashboard\/passkeys\/new$/);
    await page.getByRole('button', { name: 'Register a passkey' }).click();
    await page.waitForURL(dashboard());
    return page;
  }

  return { api, dashboard, signInWithLink };
}

/**
 * For the calling file: starts the loopback Telegram fake, a test service pointed at it and Chromium
 * (`beforeAll`), stops them (`afterAll`), and returns the harness with getters of the service and the fake.
 */
export function telegramDashboardFixture() {
  const started: { telegram?: FakeBotApi; service?: LocalService; browser?: Browser } = {};
  const get = <T>(what: string, value: T | undefined): T => {
    if (value === undefined) throw new Error(`${what} is not started yet (read it inside a test)`);
    return value;
  };
  beforeAll(async () => {
    started.telegram = await startFakeBotApi();
    started.service = await startTestService({ integrations: { telegramApiRoot: started.telegram.url } });
    started.browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await started.browser?.close();
    await started.service?.stop();
    await started.telegram?.stop();
  });
  const service = () => get('the service', started.service);
  const telegram = () => get('the Telegram fake', started.telegram);
  return { ...dashboardHarness(service, () => get('Chromium', started.browser)), service, telegram };
}

/** Waits (vi.waitFor, polling every 200 ms) until `probe` returns a truthy value, and returns it. */
export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeout = 30_000,
): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (!value) throw new Error(`still waiting for ${what}`);
      return value;
    },
    { timeout, interval: 200 },
  );
}
