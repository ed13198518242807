/**
 * `npm start` exactly as a newcomer runs it: it starts its own DynamoDB Local, seeds the demo team,
 * prints the URLs and a working demo token within 30 seconds, and Ctrl-C (SIGINT) stops everything,
 * DynamoDB Local included.
 */
import { spawn } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { describe, expect, it, vi } from 'vitest';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

describe('npm start', () => {
  it('starts in under 30 s with its own DynamoDB Local, serves the smoke test, and Ctrl-C stops everything', async () => {
    const dynamoDbPort = await freePort();
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', DYNAMODB_LOCAL_PORT: String(dynamoDbPort) };
    delete env.DYNAMODB_ENDPOINT;
    // Its own process group, like a terminal's foreground job: Ctrl-C signals every process in the group.
    const child = spawn('npm', ['start', '--silent'], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    let servicePort = 0;
    try {
      await vi.waitFor(() => expect(child.exitCode === null ? output : 'npm exited').toContain('Press Ctrl-C to stop'), { timeout: 30_000, interval: 100 });
      const startedIn = Number(/started in ([\d.]+) s/.exec(output)?.[1]);
      expect(startedIn).toBeLessThan(30);
      const token = /Demo token \(every ability; shown once\): (\S+)/.exec(output)![1];
      const baseUrl = /REST API:\s+(\S+)\/v1\//.exec(output)![1];
      servicePort = Number(new URL(baseUrl).port);
      const team = await fetch(`${baseUrl}/v1/teams/current`, { headers: { Authorization: `Bearer ${token}` } });
      expect(team.status).toBe(200);
      expect(await accepts(dynamoDbPort)).toBe(true);
    } finally {
      process.kill(-child.pid!, 'SIGINT'); // what Ctrl-C does
    }
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 15_000);
    const { code, signal } = await exited;
    clearTimeout(timer);
    // npm itself ends on the signal; what matters is that the service and DynamoDB Local are gone.
    expect(code === 0 || signal === 'SIGINT', `npm exited with ${code} / ${signal}`).toBe(true);
    expect(output).toContain('SIGINT: stopping...');
    await expect.poll(() => accepts(dynamoDbPort), { timeout: 5_000, interval: 100 }).toBe(false);
    expect(await accepts(servicePort)).toBe(false);
  });
});
