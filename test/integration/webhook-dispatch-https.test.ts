/**
 * The delivery pipeline with the REAL outbound HTTPS transport (DESIGN D9) against HTTPS receivers on
 * 127.0.0.1 whose certificates come from a CA made in this test (trusted through `extraCaPem`, never
 * by skipping verification). The receiver checks each delivery the way the interface tells receivers
 * to ("Webhook trust"): HMAC-SHA256 of `<t>.<raw body>` compared in constant time, |now − t| ≤ 300 s,
 * and the envelope against the headers. Servers listen on port 0 and are closed after each test.
 */
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import type { ManualClock } from '../../shared/clock.js';
import {
  createCertificateAuthority,
  issueServerCertificate,
  type CertificateAuthority,
  type ServerCertificate,
} from '../../bin/certificates.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import type { Project } from '../../shared/domain/projects/schema.js';
import { processDeliveryMessage, type ProcessOutcome } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import type { WebhookDelivery } from '../../shared/domain/webhook-deliveries/schema.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { createWebhookEndpoint, rotateWebhookEndpointSecret } from '../../shared/domain/webhook-endpoints/changes.js';
import { getWebhookEndpoint } from '../../shared/domain/webhook-endpoints/repository.js';
import { createHttpsTransport } from '../../shared/domain/webhook-deliveries/transport/https-transport.js';
import { checkSignature } from '../support/signature.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  /** Null when the receiver accepted the delivery, else why it rejected it. */
  rejection: string | null;
}

let ca: CertificateAuthority;
let cert: ServerCertificate;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  ca = await createCertificateAuthority({ commonName: 'Dispatch Test CA' });
  cert = await issueServerCertificate(ca, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] });
});

afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

/** Starts an HTTPS server on 127.0.0.1:0 that records each request and answers with `handler`. */
async function startReceiver(
  handler: (request: { headers: IncomingHttpHeaders; body: string }, res: ServerResponse, received: Received) => void,
): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = https.createServer(
    { key: cert.keyPem, cert: cert.certPem },
    (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const entry: Received = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), rejection: null };
        received.push(entry);
        handler({ headers: req.headers, body: entry.body }, res, entry);
      });
    },
  );
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `https://127.0.0.1:${port}/webhooks`, received };
}

/**
 * Checks one request as the interface's receiver rules say: the signature with the one independent
 * receiver check (test/support/signature.ts: constant-time compare, v1 or v0, |now − t| ≤ 300 s), then
 * the envelope against the headers. Returns null when the request is acceptable, else the reason.
 */
function receiverCheck(
  headers: IncomingHttpHeaders,
  rawBody: string,
  secret: string,
  nowSeconds: number,
  expectations: { projectId: string },
): string | null {
  const eventId = headers['svc-event-id'];
  const eventName = headers['svc-event-name'];
  if (typeof eventId !== 'string' || typeof eventName !== 'string') return 'missing header';
  const signatureRejection = checkSignature({ header: headers['svc-signature'], rawBody, secret, nowSeconds });
  if (signatureRejection) return signatureRejection;
  let envelope: Record<string, unknown>;
  try {
    envelope = JSON.parse(rawBody) as Record<string, unknown>;
  } catch {
    return 'body is not JSON';
  }
  if (envelope.id !== eventId) return 'id differs from SVC-Event-Id';
  if (envelope.type !== eventName) return 'type differs from SVC-Event-Name';
  if (!/^evt_[0-9A-HJKMNP-TV-Z]{26}$/.test(String(envelope.id))) return 'id is not evt_ + ULID';
  if (envelope.api_version !== '2026-05-01') return 'wrong api_version';
  if (typeof envelope.created_at !== 'string' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/.test(envelope.created_at))
    return 'created_at is not ISO 8601 UTC';
  if (envelope.project_id !== expectations.projectId) return 'wrong project_id';
  const data = envelope.data as { project?: { id?: string } } | undefined;
  if (data?.project?.id !== expectations.projectId) return 'data.project is missing or wrong';
  return null;
}

interface Pipeline {
  clock: ManualClock;
  runtime: TestRuntime;
  principal: Principal;
}

let pipeline: Pipeline;

/** Per test: fresh tables, a clock at real time (receivers check t= against real time), the real transport. */
async function setUp(transportOptions: { timeoutMs?: number } = {}): Promise<Pipeline> {
  const clock = testClock();
  const transport = createHttpsTransport({
    extraCaPem: [ca.certPem],
    allowPrivateTargets: true,
    timeoutMs: transportOptions.timeoutMs ?? 5_000,
  });
  cleanups.push(() => transport.close());
  const runtime = await createTestRuntime({ clock, transport });
  const { principal } = await seedTeam(runtime.store, clock);
  await relayOutbox(runtime, clock.nowMs()); // the team's own team.created, to no endpoint yet
  pipeline = { clock, runtime, principal };
  return pipeline;
}

/**
 * Registers an endpoint at `url`, creates a project (whose `project.created` is fanned out) and runs
 * attempt 1 through the real transport. Returns the outcome, the stored delivery and the project.
 */
async function deliverProjectCreated(
  url: string,
  options: { allowed_ips?: string[] } = {},
): Promise<{ outcome: ProcessOutcome; delivery: WebhookDelivery; project: Project; secret: string }> {
  const { runtime, principal } = pipeline;
  const endpoint = await createWebhookEndpoint(runtime, principal, {
    name: 'receiver',
    url,
    events: ['project.created'],
    ...options,
  });
  const project = await createProject(runtime, principal, {
    name: `Project ${randomUUID().slice(0, 8)}`,
    platform_type: 'telegram',
  });
  expect(await relayOutbox(runtime, runtime.clock.nowMs())).toBe(1);
  const { queued } = runtime.drain();
  expect(queued).toHaveLength(1);
  const outcome = await processDeliveryMessage(runtime, queued[0].message);
  const delivery = await getDelivery(runtime, principal, queued[0].message.delivery_id);
  return { outcome, delivery, project, secret: endpoint.secret };
}

describe('Standard Webhooks headers (DESIGN D29)', () => {
  /** The headers of a received delivery as the verification libraries take them (string values). */
  const headersOf = (received: Received) =>
    Object.fromEntries(Object.entries(received.headers).map(([name, value]) => [name, String(value)]));
  /**
   * Verifies one received delivery with both libraries (each throws when it does not verify); returns what they parsed.
   */
  const verifyWithLibraries = (received: Received, secret: string) => [
    new StandardWebhook(secret).verify(received.body, headersOf(received)),
    new SvixWebhook(secret).verify(received.body, headersOf(received)),
  ];

  it('a real delivery verifies unchanged with standardwebhooks and svix, with the current secret only; both secrets during a dual-signing window', async () => {
    await setUp();
    const receiver = await startReceiver((_request, res) =>
      res.writeHead(200, { 'Content-Type': 'text/plain' }).end('ok'),
    );
    const { runtime, principal } = pipeline;
    const endpoint = await createWebhookEndpoint(runtime, principal, {
      name: 'standard',
      url: receiver.url,
      events: ['project.created'],
    });
    const deliverOne = async () => {
      await createProject(runtime, principal, { name: `Project ${randomUUID().slice(0, 8)}`, platform_type: 'web' });
      await relayOutbox(runtime, runtime.clock.nowMs());
      const [entry] = runtime.drain().queued;
      expect(await processDeliveryMessage(runtime, entry.message)).toBe('succeeded');
      return receiver.received.at(-1)!;
    };

    const first = await deliverOne();
    const envelope = JSON.parse(first.body) as { id: string };
    expect(first.headers['webhook-id']).toBe(envelope.id);
    expect(first.headers['webhook-id']).toBe(first.headers['svc-event-id']);
    expect(first.headers['webhook-timestamp']).toBe(/t=(\d+)/.exec(String(first.headers['svc-signature']))![1]);
    expect(String(first.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    for (const parsed of verifyWithLibraries(first, endpoint.secret)) expect(parsed).toEqual(JSON.parse(first.body));
    // Not a rubber stamp: another secret and a changed body are refused.
    expect(() =>
      new StandardWebhook(`whsec_${Buffer.alloc(32, 7).toString('base64')}`).verify(first.body, headersOf(first)),
    ).toThrow();
    expect(() =>
      new SvixWebhook(endpoint.secret).verify(first.body.replace('Project', 'Pr0ject'), headersOf(first)),
    ).toThrow();

    // A dashboard rotation: the old secret keeps verifying (a second v1 entry) until the window ends.
    const rotated = await rotateWebhookEndpointSecret(runtime, principal, endpoint.id, 'dashboard');
    const during = await deliverOne();
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verifyWithLibraries(during, rotated.secret);
    verifyWithLibraries(during, endpoint.secret);
  });
});

describe('what a receiver asks for (DESIGN D29)', () => {
  it('410 Gone disables the endpoint at once; the next attempt finds it disabled and dead-letters the delivery', async () => {
    await setUp();
    const receiver = await startReceiver((_request, res) =>
      res.writeHead(410, { 'Content-Type': 'text/plain' }).end('gone'),
    );
    const { outcome, delivery } = await deliverProjectCreated(receiver.url);
    expect(outcome).toBe('retry_scheduled');
    expect(delivery.attempt_log![0]).toMatchObject({ status: 410, failure_kind: 'http_status', response_body: 'gone' });
    const endpoint = await getWebhookEndpoint(pipeline.runtime, pipeline.principal, delivery.endpoint_id);
    expect(endpoint).toMatchObject({ is_active: false, disabled_at: expect.any(String), consecutive_failures: 1 });

    pipeline.clock.advance(10_000);
    const [next] = pipeline.runtime.drain().queued;
    expect(await processDeliveryMessage(pipeline.runtime, next.message)).toBe('endpoint_disabled');
    expect(receiver.received).toHaveLength(1);
  });

  it.each([
    [429, '120', 120, 120],
    [503, String(10 * 86_400), 10 * 86_400, 86_400],
    [429, '3', 3, 10],
  ])(
    'a %i with Retry-After %s: recorded on the attempt, the next attempt planned no earlier (at most the 24-hour maximum wait)',
    async (status, header, recorded, waitSeconds) => {
      await setUp();
      const receiver = await startReceiver((_request, res) =>
        res.writeHead(status, { 'Content-Type': 'text/plain', 'Retry-After': header }).end('later'),
      );
      const { outcome, delivery } = await deliverProjectCreated(receiver.url);
      expect(outcome).toBe('retry_scheduled');
      expect(delivery.attempt_log![0]).toMatchObject({ status, retry_after_seconds: recorded });
      expect(Date.parse(delivery.next_attempt_at!) - Date.parse(delivery.last_attempt_at!)).toBe(waitSeconds * 1000);
    },
  );
});

describe('dispatch over real HTTPS', () => {
  it('a 2xx receiver that verifies the signature and the envelope: succeeded', async () => {
    await setUp();
    let secret = '';
    let projectId = '';
    const receiver = await startReceiver((request, res, entry) => {
      entry.rejection = receiverCheck(request.headers, request.body, secret, Math.floor(Date.now() / 1000), {
        projectId,
      });
      if (entry.rejection) res.writeHead(400, { 'Content-Type': 'text/plain' }).end(entry.rejection);
      else res.writeHead(200, { 'Content-Type': 'text/plain' }).end('received');
    });
    // The secret and the project id are only known once created: the receiver reads them lazily.
    const { runtime, principal } = pipeline;
    const endpoint = await createWebhookEndpoint(runtime, principal, {
      name: 'receiver',
      url: receiver.url,
      events: ['project.created'],
    });
    secret = endpoint.secret;
    const project = await createProject(runtime, principal, { name: 'Verified project', platform_type: 'discord' });
    projectId = project.id;
    await relayOutbox(runtime, runtime.clock.nowMs());
    const [entry] = runtime.drain().queued;
    const outcome = await processDeliveryMessage(runtime, entry.message);

    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0].rejection).toBeNull();
    expect(outcome).toBe('succeeded');
    const delivery = await getDelivery(runtime, principal, entry.message.delivery_id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(delivery.attempt_log).toHaveLength(1);
    expect(delivery.attempt_log![0]).toMatchObject({
      attempt: 1,
      status: 200,
      failure_kind: null,
      response_body: 'received',
    });
    expect(delivery.attempt_log![0].duration_ms).toBeGreaterThanOrEqual(0);
    // Attempt detail: the resolved address, the negotiated TLS version, a new connection's
    // setup time within the total, and the planned time beside the actual start.
    const [attempt] = delivery.attempt_log!;
    expect(attempt).toMatchObject({
      remote_address: '127.0.0.1',
      tls_version: expect.stringMatching(/^TLSv1\.[23]$/),
      planned_at: delivery.created_at,
    });
    expect(attempt.connect_ms).toEqual(expect.any(Number));
    expect(attempt.connect_ms!).toBeLessThanOrEqual(attempt.duration_ms);
    expect(Date.parse(attempt.attempted_at)).toBeGreaterThanOrEqual(Date.parse(attempt.planned_at!));
    const headers = receiver.received[0].headers;
    expect(headers['svc-event-id']).toBe(delivery.event_id);
    expect(headers['svc-event-name']).toBe('project.created');
    expect(headers['content-type']).toBe('application/json');
    expect(JSON.parse(receiver.received[0].body).data.project).toMatchObject({
      id: project.id,
      name: 'Verified project',
      platform_type: 'discord',
    });

    // The same receiver rejects a delivery signed with another secret (the check is not a rubber stamp).
    expect(
      receiverCheck(headers, receiver.received[0].body, 'whsec_other', Math.floor(Date.now() / 1000), { projectId }),
    ).toBe('signature mismatch');
    expect(
      receiverCheck(headers, receiver.received[0].body, secret, Math.floor(Date.now() / 1000) + 301, { projectId }),
    ).toBe('stale timestamp');
  });

  it.each([500, 404])(
    'a %i receiver: a failed attempt with failure_kind http_status, retried in 10 s',
    async (status) => {
      await setUp();
      const receiver = await startReceiver((_request, res) =>
        res.writeHead(status, { 'Content-Type': 'text/plain' }).end(`nope ${status}`),
      );
      const { outcome, delivery } = await deliverProjectCreated(receiver.url);
      expect(receiver.received).toHaveLength(1);
      expect(outcome).toBe('retry_scheduled');
      expect(delivery).toMatchObject({ status: 'pending', attempts: 1 });
      expect(delivery.attempt_log).toEqual([
        {
          attempt: 1,
          planned_at: delivery.created_at,
          attempted_at: delivery.last_attempt_at,
          status,
          failure_kind: 'http_status',
          duration_ms: expect.any(Number),
          connect_ms: expect.any(Number),
          remote_address: '127.0.0.1',
          tls_version: expect.stringMatching(/^TLSv1\.[23]$/),
          response_body: `nope ${status}`,
        },
      ]);
      expect(pipeline.runtime.drain().queued).toEqual([
        {
          message: {
            kind: 'attempt',
            team_id: pipeline.principal.teamId,
            delivery_id: delivery.id,
            endpoint_id: delivery.endpoint_id,
            attempt: 2,
          },
          delaySeconds: 10,
        },
      ]);
    },
  );

  it('allowed_ips that do not include the resolved address: ip_not_allowed, nothing sent', async () => {
    await setUp();
    const receiver = await startReceiver((_request, res) => res.end('ok'));
    const { outcome, delivery } = await deliverProjectCreated(receiver.url, { allowed_ips: ['203.0.113.7'] });
    expect(outcome).toBe('retry_scheduled');
    expect(receiver.received).toHaveLength(0);
    expect(delivery.attempt_log![0]).toMatchObject({ attempt: 1, status: null, failure_kind: 'ip_not_allowed' });
  });

  it('allowed_ips that include the resolved address: delivered', async () => {
    await setUp();
    const receiver = await startReceiver((_request, res) => res.end('ok'));
    const { outcome } = await deliverProjectCreated(receiver.url, { allowed_ips: ['127.0.0.1'] });
    expect(outcome).toBe('succeeded');
    expect(receiver.received).toHaveLength(1);
  });

  it('a closed port: connect', async () => {
    await setUp();
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const { outcome, delivery } = await deliverProjectCreated(`https://127.0.0.1:${port}/webhooks`);
    expect(outcome).toBe('retry_scheduled');
    expect(delivery.attempt_log![0]).toMatchObject({ attempt: 1, status: null, failure_kind: 'connect' });
  });

  it('a receiver slower than the budget: timeout', async () => {
    await setUp({ timeoutMs: 300 });
    const receiver = await startReceiver(() => {
      /* never answers; the cleanup closes the connection */
    });
    const { outcome, delivery } = await deliverProjectCreated(receiver.url);
    expect(outcome).toBe('retry_scheduled');
    expect(receiver.received).toHaveLength(1);
    expect(delivery.attempt_log![0]).toMatchObject({ attempt: 1, status: null, failure_kind: 'timeout' });
    expect(delivery.attempt_log![0].duration_ms).toBeLessThan(2_000);
  });

  it('a receiver whose certificate is not trusted: tls', async () => {
    await setUp();
    const otherCa = await createCertificateAuthority({ commonName: 'Untrusted CA' });
    const untrusted = await issueServerCertificate(otherCa, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] });
    const server = https.createServer({ key: untrusted.keyPem, cert: untrusted.certPem }, (_req, res) =>
      res.end('should not be reached'),
    );
    server.on('tlsClientError', () => {});
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { outcome, delivery } = await deliverProjectCreated(
      `https://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    );
    expect(outcome).toBe('retry_scheduled');
    expect(delivery.attempt_log![0]).toMatchObject({ attempt: 1, status: null, failure_kind: 'tls' });
  });
});
