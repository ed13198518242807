/**
 * The dashboard's browser tests' one way to drive Chromium (DESIGN §6, D21): Debian's `chromium-headless-shell`, else
 * its `chromium` (`CHROMIUM_PATH` overrides) through playwright-core, headless; a virtual WebAuthn authenticator per
 * browser context (CDP `WebAuthn.enable` / `addVirtualAuthenticator`); the axe-core check; screenshots
 * under `test-results/` with `SCREENSHOTS=1`. A missing browser is a failure that names the install command, never a
 * skip.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where screenshots go (gitignored). */
const SCREENSHOT_DIRECTORY = join(ROOT, 'test-results', 'dashboard');

/**
 * The Chromium builds tried in turn when `CHROMIUM_PATH` is unset: the headless shell (the same engine without the
 * desktop browser's windowing; it uses about half the CPU for the same pages), then the full browser.
 */
const CHROMIUM_PATHS = ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'];

/** Launches headless Chromium; throws naming the install command when the browser is missing. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = process.env.CHROMIUM_PATH || CHROMIUM_PATHS.find((path) => existsSync(path));
  if (!executablePath || !existsSync(executablePath)) {
    throw new Error(
      `Chromium was not found at ${executablePath ?? CHROMIUM_PATHS.join(' or ')}. Install it with \`apt-get install -y chromium-headless-shell\` (Debian), or set CHROMIUM_PATH to a Chromium or Chrome binary.`,
    );
  }
  return chromium.launch({ executablePath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/**
 * A browser context with its own virtual passkey authenticator (resident keys, user verification, presence
 * simulated), so passkey registration and sign-in run without a person. `bypassCSP` lets the axe script
 * be injected into pages whose CSP allows only the dashboard's own scripts.
 */
export async function contextWithAuthenticator(
  browser: Browser,
  viewport = { width: 1440, height: 900 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, bypassCSP: true });
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return { context, page };
}

let axeScriptUrl: Promise<string> | undefined;

/**
 * The URL of axe-core's script on a loopback server of this worker (unreferenced: it ends with the process). Loaded by
 * URL with a cache lifetime, Chromium keeps its compiled code: a check costs about 50 ms instead of about 400 ms for a
 * script sent as text each time.
 */
function axeUrl(): Promise<string> {
  axeScriptUrl ??= new Promise((resolve, reject) => {
    const require = createRequire(import.meta.url);
    const script = readFileSync(require.resolve('axe-core/axe.min.js'));
    const server = createServer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'text/javascript', 'Cache-Control': 'public, max-age=3600' });
      response.end(script);
    });
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.unref();
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/axe.min.js`);
    });
  });
  return axeScriptUrl;
}

/** Runs axe-core in the page and fails on any serious or critical violation (naming them). */
export async function expectAccessible(page: Page): Promise<void> {
  await page.addScriptTag({ url: await axeUrl() });
  const violations = await page.evaluate(async () => {
    const result = await (
      window as unknown as {
        axe: {
          run(): Promise<{
            violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: unknown }> }>;
          }>;
        };
      }
    ).axe.run();
    return result.violations
      .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
      .map(
        (violation) =>
          `${violation.id} (${violation.impact}): ${violation.help} at ${JSON.stringify(violation.nodes.slice(0, 3).map((node) => node.target))}`,
      );
  });
  expect(violations, `axe on ${page.url()}`).toEqual([]);
}

/**
 * Saves a full-page screenshot as `test-results/dashboard/<name>.png` when `SCREENSHOTS=1` (a PNG of a full page costs
 * a quarter of a second, and nothing asserts on it: the pictures are for people reviewing the pages).
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  mkdirSync(SCREENSHOT_DIRECTORY, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIRECTORY, `${name}.png`), fullPage: true });
}
