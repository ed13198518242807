/**
 * Fault tests of the outbound HTTPS transport (DESIGN D9) against real HTTPS servers on 127.0.0.1,
 * with certificates from a CA made here. Every server listens on port 0 and is closed after each test.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createCertificateAuthority,
  issueServerCertificate,
  type CertificateAuthority,
  type ServerCertificate,
} from '../../bin/certificates.js';
import {
  createHttpsTransport,
  retryAfterOf,
} from '../../shared/domain/webhook-deliveries/transport/https-transport.js';
import type { WebhookTransport } from '../../shared/domain/webhook-deliveries/transport/port.js';
import { extraCaFromEnvironment } from '../../shared/domain/webhook-deliveries/transport/trust.js';
import { DAY_MS } from '../../shared/clock.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  servername: string | false | null | undefined;
}

interface TestServer {
  port: number;
  seen: Seen[];
  connections: number;
}

let ca: CertificateAuthority;
let goodCert: ServerCertificate;
let otherCa: CertificateAuthority;
let untrustedCert: ServerCertificate;
let expiredCert: ServerCertificate;
let wrongHostCert: ServerCertificate;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

beforeAll(async () => {
  ca = await createCertificateAuthority({ commonName: 'Transport Test CA' });
  otherCa = await createCertificateAuthority({ commonName: 'Untrusted Test CA' });
  [goodCert, untrustedCert, expiredCert, wrongHostCert] = await Promise.all([
    issueServerCertificate(ca, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] }),
    issueServerCertificate(otherCa, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] }),
    issueServerCertificate(ca, {
      hostnames: ['localhost'],
      ipAddresses: ['127.0.0.1'],
      notBefore: new Date(Date.now() - 3 * DAY_MS),
      notAfter: new Date(Date.now() - DAY_MS),
    }),
    issueServerCertificate(ca, { hostnames: ['other.example'], ipAddresses: [] }),
  ]);
});

async function startServer(
  handler: (req: IncomingMessage, res: ServerResponse, body: string) => void,
  options: { cert?: ServerCertificate; tls?: https.ServerOptions } = {},
): Promise<TestServer> {
  const cert = options.cert ?? goodCert;
  const state: TestServer = { port: 0, seen: [], connections: 0 };
  const server = https.createServer({ key: cert.keyPem, cert: cert.certPem, ...options.tls }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        servername: (req.socket as TLSSocket).servername,
      });
      handler(req, res, body);
    });
  });
  server.on('secureConnection', () => {
    state.connections += 1;
  });
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return state;
}

function transport(options: Parameters<typeof createHttpsTransport>[0] = {}): WebhookTransport {
  const t = createHttpsTransport({ extraCaPem: [ca.certPem], allowPrivateTargets: true, timeoutMs: 3000, ...options });
  cleanups.push(() => t.close());
  return t;
}

const body = JSON.stringify({ id: 'evt_01', type: 'subscription.created', data: { ok: 'é' } });
const headers = {
  'Content-Type': 'application/json',
  'SVC-Signature': 't=1700000000,v1=abc',
  'SVC-Event-Id': 'evt_01',
  'SVC-Event-Name': 'subscription.created',
};

describe('createHttpsTransport', () => {
  it('delivers to a 2xx receiver with the exact body and headers', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/hooks?x=1`, headers, body });
    expect(result).toMatchObject({
      ok: true,
      status: 204,
      failure_kind: null,
      failure_message: null,
      response_body: '',
      remote_address: '127.0.0.1',
    });
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    expect(server.seen).toHaveLength(1);
    const seen = server.seen[0];
    expect(seen.method).toBe('POST');
    expect(seen.url).toBe('/hooks?x=1');
    expect(seen.body).toBe(body);
    expect(seen.headers['content-type']).toBe('application/json');
    expect(seen.headers['svc-signature']).toBe(headers['SVC-Signature']);
    expect(seen.headers['svc-event-id']).toBe('evt_01');
    expect(seen.headers['svc-event-name']).toBe('subscription.created');
    expect(seen.headers['content-length']).toBe(String(Buffer.byteLength(body)));
  });

  it('uses the URL host for SNI and the certificate check while connecting to the resolved address', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const result = await transport({ lookup: async () => ['127.0.0.1'] }).send({
      url: `https://localhost:${server.port}/`,
      headers,
      body,
    });
    expect(result).toMatchObject({ ok: true, status: 200, response_body: 'ok', remote_address: '127.0.0.1' });
    expect(server.seen[0].servername).toBe('localhost');
    expect(server.seen[0].headers.host).toBe(`localhost:${server.port}`);
  });

  it('reuses a kept-alive connection for the same origin and address', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const t = transport();
    for (let i = 0; i < 3; i++) {
      expect((await t.send({ url: `https://127.0.0.1:${server.port}/`, headers, body })).ok).toBe(true);
    }
    expect(server.connections).toBe(1);
  });

  it.each([500, 404])('reports %i as http_status with the first KiB of the body', async (status) => {
    const server = await startServer((_req, res) => res.writeHead(status).end('x'.repeat(5000)));
    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(result).toMatchObject({ ok: false, status, failure_kind: 'http_status' });
    expect(result.response_body).toBe('x'.repeat(1024));
  });

  it('does not follow a 302', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/moved') res.writeHead(302, { Location: '/elsewhere' }).end('see elsewhere');
      else res.end('should not be reached');
    });
    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/moved`, headers, body });
    expect(result).toMatchObject({
      ok: false,
      status: 302,
      failure_kind: 'http_status',
      response_body: 'see elsewhere',
    });
    expect(server.seen.map((s) => s.url)).toEqual(['/moved']);
  });

  it('times out a server that never answers within the budget', async () => {
    const server = await startServer(() => {
      /* never answers; closed by the cleanup */
    });
    const result = await transport({ timeoutMs: 300 }).send({
      url: `https://127.0.0.1:${server.port}/`,
      headers,
      body,
    });
    expect(result).toMatchObject({ ok: false, status: null, failure_kind: 'timeout' });
    expect(result.duration_ms).toBeGreaterThanOrEqual(250);
    expect(result.duration_ms).toBeLessThan(2000);
  });

  it('times out a 2xx whose body does not finish within the budget (one budget for the whole attempt)', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200);
      res.write('partial');
    });
    const result = await transport({ timeoutMs: 300 }).send({
      url: `https://127.0.0.1:${server.port}/`,
      headers,
      body,
    });
    expect(result).toMatchObject({ ok: false, status: 200, failure_kind: 'timeout', response_body: 'partial' });
  });

  it('reports a connection reset by the server (TCP RST during the handshake) as connect', async () => {
    // A raw TCP server that answers the ClientHello with a reset.
    const raw = net.createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => raw.close(() => resolve())));
    const port = (raw.address() as AddressInfo).port;
    const result = await transport().send({ url: `https://127.0.0.1:${port}/`, headers, body });
    expect(result).toMatchObject({ ok: false, status: null, failure_kind: 'connect' });
    expect(result.failure_message).toContain('ECONNRESET');
  });

  it('reports a connection closed after the request without a response (socket hang up) as connect', async () => {
    const server = await startServer((req) => req.socket.destroy());
    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(result).toMatchObject({ ok: false, status: null, failure_kind: 'connect' });
    expect(server.seen).toHaveLength(1);
  });

  it('reports a refused connection (closed port) as connect', async () => {
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const result = await transport().send({ url: `https://127.0.0.1:${port}/`, headers, body });
    expect(result).toMatchObject({ ok: false, status: null, failure_kind: 'connect' });
    expect(result.failure_message).toContain('ECONNREFUSED');
  });

  it('refuses a certificate from an untrusted CA', async () => {
    const server = await startServer((_req, res) => res.end('ok'), { cert: untrustedCert });
    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(result).toMatchObject({ ok: false, failure_kind: 'tls', status: null });
    expect(server.seen).toHaveLength(0);
  });

  it('trusts only the extra CA it was given (Node roots alone do not trust the test CA)', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const t = createHttpsTransport({ allowPrivateTargets: true, timeoutMs: 3000 });
    cleanups.push(() => t.close());
    expect((await t.send({ url: `https://127.0.0.1:${server.port}/`, headers, body })).failure_kind).toBe('tls');
  });

  it('refuses an expired certificate', async () => {
    const server = await startServer((_req, res) => res.end('ok'), { cert: expiredCert });
    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(result).toMatchObject({ ok: false, failure_kind: 'tls' });
    expect(result.failure_message).toMatch(/expired/i);
  });

  it('refuses a certificate for another host name', async () => {
    const server = await startServer((_req, res) => res.end('ok'), { cert: wrongHostCert });
    const result = await transport({ lookup: async () => ['127.0.0.1'] }).send({
      url: `https://localhost:${server.port}/`,
      headers,
      body,
    });
    expect(result).toMatchObject({ ok: false, failure_kind: 'tls' });
    expect(result.failure_message).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID|altnames/);
    expect(server.seen).toHaveLength(0);
  });

  it('refuses a server that only speaks TLS 1.1', async () => {
    // OpenSSL 3 disables TLS 1.0/1.1 at its default security level 1, so the server lowers it to 0;
    // the transport's minimum stays TLS 1.2 and the handshake fails with a protocol-version error.
    const server = await startServer((_req, res) => res.end('ok'), {
      tls: { minVersion: 'TLSv1.1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT@SECLEVEL=0' },
    });
    // Sanity check: the server really completes a TLS 1.1 handshake with a client that allows it.
    const protocol = await new Promise<string | null>((resolve, reject) => {
      const req = https.request(
        {
          host: '127.0.0.1',
          port: server.port,
          ca: ca.certPem,
          minVersion: 'TLSv1.1',
          maxVersion: 'TLSv1.1',
          ciphers: 'DEFAULT@SECLEVEL=0',
          agent: false,
          method: 'POST',
        },
        (res) => {
          res.resume();
          resolve((res.socket as TLSSocket).getProtocol());
        },
      );
      req.on('error', reject);
      req.end('{}');
    });
    expect(protocol).toBe('TLSv1.1');

    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(result).toMatchObject({ ok: false, failure_kind: 'tls', status: null });
    expect(result.failure_message).toMatch(/protocol/i);
    expect(server.seen).toHaveLength(1); // only the sanity-check request
  });

  it('reports a name that does not resolve as dns', async () => {
    const result = await transport({ allowPrivateTargets: false }).send({
      url: 'https://does-not-exist.invalid/hooks',
      headers,
      body,
    });
    expect(result).toMatchObject({ ok: false, status: null, failure_kind: 'dns', remote_address: null });
  });

  it('reports an injected lookup failure as dns', async () => {
    const result = await transport({
      lookup: async () => {
        throw Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' });
      },
    }).send({ url: 'https://x.example/', headers, body });
    expect(result.failure_kind).toBe('dns');
  });

  it('refuses a resolved address that is not in allowed_ips', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const result = await transport().send({
      url: `https://127.0.0.1:${server.port}/`,
      headers,
      body,
      allowedIps: ['10.0.0.1', '192.0.2.0/24'],
    });
    expect(result).toMatchObject({ ok: false, failure_kind: 'ip_not_allowed', status: null, remote_address: null });
    expect(server.seen).toHaveLength(0);
  });

  it('delivers when the resolved address is in allowed_ips (address or CIDR)', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const t = transport({ lookup: async () => ['127.0.0.1'] });
    for (const allowedIps of [['127.0.0.1'], ['10.0.0.0/8', '127.0.0.0/8'], ['::ffff:127.0.0.1']]) {
      const result = await t.send({ url: `https://localhost:${server.port}/`, headers, body, allowedIps });
      expect(result.ok).toBe(true);
    }
  });

  it('refuses private, loopback and metadata addresses unless private targets are allowed', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const strict = transport({ allowPrivateTargets: false });
    const direct = await strict.send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(direct).toMatchObject({ ok: false, failure_kind: 'private_address', status: null });
    // An allowlist does not by itself open a private address.
    const listed = await strict.send({
      url: `https://127.0.0.1:${server.port}/`,
      headers,
      body,
      allowedIps: ['127.0.0.1'],
    });
    expect(listed.failure_kind).toBe('private_address');
    for (const address of [
      '169.254.169.254',
      '10.1.2.3',
      '192.168.1.1',
      '::1',
      'fd00::1',
      '0.0.0.0',
      '::ffff:127.0.0.1',
    ]) {
      const t = transport({ allowPrivateTargets: false, lookup: async () => [address] });
      expect((await t.send({ url: 'https://hooks.example/', headers, body })).failure_kind, address).toBe(
        'private_address',
      );
    }
    expect(server.seen).toHaveLength(0);
  });

  it('rejects http:// and unparsable URLs as invalid_url', async () => {
    const t = transport();
    expect(await t.send({ url: 'http://127.0.0.1:1/', headers, body })).toMatchObject({
      ok: false,
      failure_kind: 'invalid_url',
      status: null,
    });
    expect((await t.send({ url: 'not a url', headers, body })).failure_kind).toBe('invalid_url');
  });

  it('resolves once per attempt and connects to that address (DNS rebinding)', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const calls: string[] = [];
    const lookup = async (hostname: string): Promise<string[]> => {
      calls.push(hostname);
      // Any later lookup in the same attempt would move the connection to an address nobody listens on.
      return calls.length % 2 === 1 ? ['127.0.0.1'] : ['127.0.0.2'];
    };
    const t = createHttpsTransport({ extraCaPem: [ca.certPem], allowPrivateTargets: true, timeoutMs: 3000, lookup });
    cleanups.push(() => t.close());
    const first = await t.send({ url: `https://localhost:${server.port}/a`, headers, body });
    expect(first).toMatchObject({ ok: true, remote_address: '127.0.0.1' });
    expect(calls).toEqual(['localhost']);
    expect(server.seen.map((s) => s.url)).toEqual(['/a']);
  });

  it('does not call the resolver for an IP literal', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    let calls = 0;
    const result = await transport({
      lookup: async () => {
        calls += 1;
        return ['127.0.0.1'];
      },
    }).send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(result.ok).toBe(true);
    expect(calls).toBe(0);
  });

  it('stops reading a response body after 64 KiB', async () => {
    let finished: boolean | undefined;
    const closed = new Promise<void>((resolve) => {
      void startServer((_req, res) => {
        res.on('close', () => {
          finished = res.writableFinished;
          resolve();
        });
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.end(Buffer.alloc(16 * 1024 * 1024, 'a'));
      }).then((s) => serverReady(s));
    });
    let serverReady!: (s: TestServer) => void;
    const server = await new Promise<TestServer>((resolve) => (serverReady = resolve));
    const result = await transport().send({ url: `https://127.0.0.1:${server.port}/`, headers, body });
    expect(result).toMatchObject({ ok: true, status: 200, failure_kind: null });
    expect(result.response_body).toBe('a'.repeat(1024));
    await closed;
    expect(finished).toBe(false);
  });
});

describe('extraCaFromEnvironment', () => {
  it('returns [] when WEBHOOK_EXTRA_CA_FILE is unset and throws on a file without a certificate', async () => {
    expect(extraCaFromEnvironment({})).toEqual([]);
    const dir = mkdtempSync(join(tmpdir(), 'extra-ca-'));
    writeFileSync(join(dir, 'ca.pem'), ca.certPem + otherCa.certPem);
    writeFileSync(join(dir, 'empty.pem'), 'nothing');
    expect(extraCaFromEnvironment({ WEBHOOK_EXTRA_CA_FILE: join(dir, 'ca.pem') })).toEqual([
      ca.certPem + otherCa.certPem,
    ]);
    expect(() => extraCaFromEnvironment({ WEBHOOK_EXTRA_CA_FILE: join(dir, 'empty.pem') })).toThrow(/no PEM/);
  });
});

describe('retryAfterOf (RFC 9110 Retry-After)', () => {
  const now = Date.parse('2026-11-27T10:00:00Z');
  it('reads delta-seconds and an HTTP-date relative to now, never negative; null when absent or unreadable', () => {
    expect(retryAfterOf('120', now)).toBe(120);
    expect(retryAfterOf(['30', '60'], now)).toBe(30);
    expect(retryAfterOf('Fri, 27 Nov 2026 10:02:00 GMT', now)).toBe(120);
    expect(retryAfterOf('Fri, 27 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(retryAfterOf(undefined, now)).toBeNull();
    expect(retryAfterOf('soon', now)).toBeNull();
    expect(retryAfterOf('-5', now)).toBeNull();
  });
});
