/**
 * `npm start` exactly as a newcomer runs it: it starts its own DynamoDB Local and e-mail inbox (MailDev), seeds the
 * demo team, prints the URLs and a working demo token, then writes the demo history in the background (a line after
 * the banner says when it is done), and Ctrl-C (SIGINT to the terminal's process group), SIGTERM to the npm process
 * alone (a process manager, `kill <pid>`) or SIGHUP (the terminal closing) stops everything, DynamoDB Local and the
 * inbox included.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { constants } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/ports.js';

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** A running `npm start` with its own DynamoDB Local. */
interface NpmStart {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  dynamoDbPort: number;
  servicePort: number;
  /** The inbox's web port (MailDev). */
  inboxPort: number;
  baseUrl: string;
  token: string;
}

/**
 * Runs `npm start` in its own process group (like a terminal's foreground job) and waits for its banner;
 * `demoHistory: false` skips the 60-day demo history (`DEMO_HISTORY=0`) where only the process handling is tested.
 */
async function startNpm({ demoHistory = true } = {}): Promise<NpmStart> {
  const dynamoDbPort = await freePort();
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PORT: '0',
    DYNAMODB_LOCAL_PORT: String(dynamoDbPort),
    DEMO_HISTORY: demoHistory ? '1' : '0',
  };
  delete env.DYNAMODB_ENDPOINT;
  delete env.SMTP_URL;
  const child = spawn('npm', ['start', '--silent'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  try {
    // Generous: a loaded machine seeds the demo history slowly (its time is a figure for the bench, not a test).
    await vi.waitFor(() => expect(child.exitCode === null ? output : 'npm exited').toContain('Press Ctrl-C to stop'), {
      timeout: 120_000,
      interval: 100,
    });
  } catch (error) {
    process.kill(-child.pid!, 'SIGKILL');
    throw error;
  }
  const baseUrl = /REST API:\s+(\S+)\/v1\//.exec(output)![1];
  return {
    child,
    output: () => output,
    exited,
    dynamoDbPort,
    servicePort: Number(new URL(baseUrl).port),
    inboxPort: Number(new URL(/Inbox:\s+(\S+) \(every e-mail the service sends\)/.exec(output)![1]).port),
    baseUrl,
    token: /Demo token \(every ability[^)]*\): (\S+)/.exec(output)![1],
  };
}

/** Waits for npm to exit (SIGKILL to the group after 15 s) and checks the service and DynamoDB Local are gone. */
async function expectEverythingStopped(started: NpmStart, signal: NodeJS.Signals): Promise<void> {
  const timer = setTimeout(() => process.kill(-started.child.pid!, 'SIGKILL'), 15_000);
  const { code, signal: endedBy } = await started.exited;
  clearTimeout(timer);
  // npm itself may end on the signal (or report it as 128 + its number); what matters is that the service
  // and DynamoDB Local are gone.
  expect(
    code === 0 || code === 128 + constants.signals[signal] || endedBy === signal,
    `npm exited with ${code} / ${endedBy}`,
  ).toBe(true);
  // The service's own last lines may arrive after npm's exit: npm and tsx end on SIGHUP at once, while the
  // service (same process group, same pipe) is still writing.
  await expect.poll(() => started.output(), { timeout: 10_000, interval: 100 }).toContain(`${signal}: stopping...`);
  await expect.poll(() => accepts(started.dynamoDbPort), { timeout: 5_000, interval: 100 }).toBe(false);
  expect(await accepts(started.servicePort)).toBe(false);
  await expect.poll(() => accepts(started.inboxPort), { timeout: 5_000, interval: 100 }).toBe(false);
}

describe('npm start', () => {
  it('starts with its own DynamoDB Local and the demo history, serves the smoke test, and Ctrl-C stops everything', async () => {
    const started = await startNpm();
    try {
      expect(started.output()).toMatch(/started in [\d.]+ s/);
      // The banner does not wait for the demo history: it says so, and the history's own line follows it.
      expect(started.output()).toContain('is being written in the background');
      await vi.waitFor(() => expect(started.output()).toMatch(/Demo history written in [\d.]+ s/), {
        timeout: 120_000,
        interval: 100,
      });
      expect(started.output().indexOf('Demo history written')).toBeGreaterThan(
        started.output().indexOf('Press Ctrl-C to stop'),
      );
      const team = await fetch(`${started.baseUrl}/v1/teams/current`, {
        headers: { Authorization: `Bearer ${started.token}` },
      });
      expect(team.status).toBe(200);
      // The demo project's join page, printed in the banner, sells its free plan without a provider.
      const joinUrl = /Join page:\s+(\S+)/.exec(started.output())![1];
      const joinPage = await fetch(joinUrl);
      expect(joinPage.status).toBe(200);
      expect(await joinPage.text()).toContain('Free newsletter');
      expect(await accepts(started.dynamoDbPort)).toBe(true);
      // The inbox, printed beside the dashboard, serves MailDev's web interface and its (empty) list of e-mail.
      const inbox = await fetch(`http://127.0.0.1:${started.inboxPort}/`, { headers: { Accept: 'text/html' } });
      expect(inbox.status).toBe(200);
      expect(await inbox.text()).toContain('MailDev');
      const emails = await fetch(`http://127.0.0.1:${started.inboxPort}/api/email`);
      expect(await emails.json()).toEqual([]);
    } finally {
      process.kill(-started.child.pid!, 'SIGINT'); // what Ctrl-C does
    }
    await expectEverythingStopped(started, 'SIGINT');
  });

  it('stops everything on SIGTERM sent to the npm process alone (kill <pid>, a process manager)', async () => {
    const started = await startNpm({ demoHistory: false });
    expect(await accepts(started.dynamoDbPort)).toBe(true);
    process.kill(started.child.pid!, 'SIGTERM'); // npm only, not its process group
    await expectEverythingStopped(started, 'SIGTERM');
  });

  it('stops everything on SIGHUP (the terminal closing hangs up its foreground process group)', async () => {
    const started = await startNpm({ demoHistory: false });
    expect(await accepts(started.dynamoDbPort)).toBe(true);
    process.kill(-started.child.pid!, 'SIGHUP');
    await expectEverythingStopped(started, 'SIGHUP');
  });
});
