/**
 * The example receiver as `npm run receiver` runs it: `kill -TERM` of npm stops the receiver itself (its port is free
 * again), and a token given in SERVICE_TOKEN never appears in what npm or the receiver print.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../support/ports.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
let directory: string;

/** True when something still listens on `port` of 127.0.0.1. */
async function isListening(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(true));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(false)));
  });
}

/** Spawns `npm run receiver -- <args>` with `env` added; resolves its output and exit once it ends. */
function npmReceiver(args: string[], env: NodeJS.ProcessEnv) {
  const child = spawn('npm', ['run', 'receiver', '--', '--dir', directory, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'receiver-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

describe('npm run receiver', () => {
  it('stops, port and all, when npm gets SIGTERM', async () => {
    const port = await freePort();
    const receiver = npmReceiver(['--port', String(port)], {});
    try {
      await vi.waitFor(() => expect(receiver.output()).toContain('Receiver listening on'), {
        timeout: 60_000,
        interval: 50,
      });
      expect(await isListening(port)).toBe(true);
      receiver.child.kill('SIGTERM');
      await receiver.exited;
      await vi.waitFor(async () => expect(await isListening(port)).toBe(false), { timeout: 10_000, interval: 50 });
    } finally {
      receiver.child.kill('SIGKILL');
    }
  });

  it('takes the token from SERVICE_TOKEN and never prints it', async () => {
    const token = `svc_live_01JAAAAAAAAAAAAAAAAAAAAAAA_${'s'.repeat(43)}`;
    // Registration against a closed port fails: the receiver reports it and exits with 1.
    const receiver = npmReceiver(['--port', '0', '--register', 'http://127.0.0.1:9'], { SERVICE_TOKEN: token });
    expect(await receiver.exited).toBe(1);
    expect(receiver.output()).toContain('Receiver listening on');
    expect(receiver.output()).not.toContain(token);
    expect(receiver.output()).not.toContain('needs a token');
  });
});
