/**
 * The local server's own HTTP edge (`startLocalService`, DESIGN D5, §5): it validates `Host` against the
 * names it serves (DNS-rebinding protection, as the MCP SDK's `allowedHosts`), stops reading a request
 * body at its surface's limit and answers 413 at once (as API Gateway refuses bodies over its cap before
 * any Lambda runs), and with a data directory keeps a working demo token across restarts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeToken } from '../../shared/domain/tokens/repository.js';
import { MAX_BODY_BYTES } from '../../shared/http/rest-pipeline.js';
import { MAX_MCP_BODY_BYTES } from '../../shared/mcp/responses.js';
import { DEMO_TOKEN_FILE, type LocalService } from '../../shared/local/service.js';
import { startTestService } from '../support/local-service.js';

let service: LocalService;

beforeAll(async () => {
  service = await startTestService();
});

afterAll(async () => {
  await service?.stop();
});

interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** True when the answer arrived while the request body was still being sent (never finished). */
  beforeBodyEnded: boolean;
}

/**
 * Sends a request with node:http (so `Host` and `Content-Length` can be anything) and resolves with the
 * answer. `body`: bytes to send in chunks of 64 KiB; `holdOpen`: never end the request (the answer must
 * come while the client is still sending). The connection is destroyed once answered.
 */
function raw(options: {
  method?: string;
  path: string;
  headers?: Record<string, string | number>;
  body?: number;
  holdOpen?: boolean;
}): Promise<RawAnswer> {
  const base = new URL(service.baseUrl);
  return new Promise((resolve, reject) => {
    let ended = false;
    const outgoing = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: options.method ?? 'POST',
        path: options.path,
        headers: options.headers,
      },
      (incoming) => {
        let body = '';
        incoming.setEncoding('utf8');
        incoming.on('data', (chunk: string) => (body += chunk));
        incoming.on('end', () => {
          resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body, beforeBodyEnded: !ended });
          outgoing.destroy();
        });
      },
    );
    outgoing.on('error', reject); // ignored once resolved (the server may close while the client still sends)
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let left = options.body ?? 0;
    const pump = () => {
      while (left > 0) {
        const size = Math.min(left, chunk.length);
        left -= size;
        if (!outgoing.write(chunk.subarray(0, size))) return void outgoing.once('drain', pump);
      }
      if (!options.holdOpen) {
        ended = true;
        outgoing.end();
      }
    };
    pump();
  });
}

describe('Host validation (DESIGN D5: DNS-rebinding protection)', () => {
  it('refuses a Host that is not a name it serves, on the tool server and on REST, before reading anything', async () => {
    const foreignMcp = await raw({
      path: '/mcp',
      headers: {
        Host: 'evil.example.com',
        Origin: 'http://evil.example.com',
        'Content-Type': 'application/json',
        Authorization: `Bearer ${service.demoToken}`,
      },
    });
    expect(foreignMcp.status).toBe(403);
    expect(JSON.parse(foreignMcp.body)).toMatchObject({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Invalid Host: evil.example.com' },
      id: null,
    });
    expect(foreignMcp.headers['access-control-allow-origin']).toBe('*');

    const foreignRest = await raw({
      method: 'GET',
      path: '/v1/teams/current',
      headers: {
        Host: `evil.example.com:${new URL(service.baseUrl).port}`,
        Authorization: `Bearer ${service.demoToken}`,
      },
    });
    expect(foreignRest.status).toBe(422);
    expect(JSON.parse(foreignRest.body)).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'header.host' }],
    });
    expect(
      (await raw({ method: 'GET', path: '/openapi.json', headers: { Host: 'rebound.attacker.test' } })).status,
    ).toBe(422);
  });

  it('serves the loopback names on any port (a proxy in front keeps working)', async () => {
    for (const host of [
      '127.0.0.1',
      `127.0.0.1:${new URL(service.baseUrl).port}`,
      'localhost:1',
      'LOCALHOST',
      '[::1]:8080',
    ]) {
      const answer = await raw({
        method: 'GET',
        path: '/v1/teams/current',
        headers: { Host: host, Authorization: `Bearer ${service.demoToken}` },
      });
      expect(answer.status, host).toBe(200);
    }
  });
});

describe('request body limits (DESIGN D5)', () => {
  it('answers 413 at once to a Content-Length over the limit, without reading the body', async () => {
    const answer = await raw({
      path: '/v1/projects',
      headers: { 'Content-Type': 'application/json', 'Content-Length': 410 * 1024 * 1024 },
      body: 64 * 1024,
      holdOpen: true,
    });
    expect(answer.status).toBe(413);
    expect(answer.beforeBodyEnded).toBe(true);
    expect(answer.headers.connection).toBe('close');
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
  });

  it('stops reading a chunked body at the REST limit and answers 413 while the client is still sending', async () => {
    const answer = await raw({
      path: '/v1/projects',
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      body: MAX_BODY_BYTES + 128 * 1024,
      holdOpen: true,
    });
    expect(answer.status).toBe(413);
    expect(answer.beforeBodyEnded).toBe(true);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('stops reading at the tool server\u2019s limit with the tool server\u2019s 413 (JSON-RPC, CORS), before authentication', async () => {
    const answer = await raw({
      path: '/mcp',
      headers: { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' },
      body: MAX_MCP_BODY_BYTES + 128 * 1024,
      holdOpen: true,
    });
    expect(answer.status).toBe(413);
    expect(answer.beforeBodyEnded).toBe(true);
    expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    expect(answer.headers['access-control-allow-origin']).toBe('*');
    expect(answer.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('still serves bodies within the limit, and keeps serving after refusing large ones', async () => {
    const ok = await fetch(`${service.baseUrl}/v1/teams/current`, {
      headers: { Authorization: `Bearer ${service.demoToken}` },
    });
    expect(ok.status).toBe(200);
    const withinLimit = await raw({
      path: '/v1/projects',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${service.demoToken}`,
        'Idempotency-Key': crypto.randomUUID(),
        'Content-Length': MAX_BODY_BYTES,
      },
      body: MAX_BODY_BYTES,
    });
    expect(withinLimit.status).toBe(422); // read whole, then refused as JSON (not 413)
  });
});

describe('the demo token with a data directory (DESIGN §5)', () => {
  it('prints the same working token after a restart, kept in DATA_DIR/demo-token with mode 0600; a new one once it no longer works', async () => {
    const dataDirectory = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const tableName = `demo-${randomBytes(4).toString('hex')}`;
    try {
      const first = await startTestService({ tableName, dataDirectory });
      const file = join(dataDirectory, DEMO_TOKEN_FILE);
      expect(first.demoTokenFile).toBe(file);
      expect(readFileSync(file, 'utf8').trim()).toBe(first.demoToken);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      await first.stop();

      const second = await startTestService({ tableName, dataDirectory });
      expect(second.demoToken).toBe(first.demoToken);
      expect(
        (
          await fetch(`${second.baseUrl}/v1/teams/current`, {
            headers: { Authorization: `Bearer ${second.demoToken}` },
          })
        ).status,
      ).toBe(200);
      const revokedId = /^svc_live_([0-9A-Z]{26})_/.exec(second.demoToken)![1];
      await revokeToken(second.store, second.runtime.clock, second.demoTeamId, revokedId);
      await second.stop();

      const third = await startTestService({ tableName, dataDirectory });
      expect(third.demoToken).not.toBe(first.demoToken);
      expect(readFileSync(file, 'utf8').trim()).toBe(third.demoToken);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(
        (await fetch(`${third.baseUrl}/v1/teams/current`, { headers: { Authorization: `Bearer ${third.demoToken}` } }))
          .status,
      ).toBe(200);
      await third.stop();
    } finally {
      rmSync(dataDirectory, { recursive: true, force: true });
    }
  });

  it('mints a token at each start without a data directory (shown once, kept nowhere)', async () => {
    expect(service.demoTokenFile).toBeNull();
  });
});
