/**
 * Fair delivery (DESIGN D24) through the local service with real HTTPS: team A has 10
 * endpoints whose receiver accepts connections and never answers, and 50 deliveries queued to them (more
 * than the local worker's 32 slots);
 * team B sends a test event to its own receiver. B's event must reach B's receiver while A's backlog is
 * still there (one team's dead receivers do not hold another team's deliveries). Timings belong in the
 * bench (`npm run bench`, noisy-neighbour figure); this test asserts the order of things only.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, expect, it, vi } from 'vitest';
import { createCertificateAuthority, issueServerCertificate } from '../../bin/certificates.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { listDeliveries } from '../../shared/domain/webhook-deliveries/reads.js';
import { createWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import type { LocalService } from '../../shared/local/service.js';
import { startTestReceiver, type TestReceiver } from '../support/https-receiver.js';
import { startTestService } from '../support/local-service.js';
import { seedTeam } from '../support/store.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** An HTTPS receiver on 127.0.0.1 that reads each request and never answers; `held` counts the requests it holds. */
async function startSilentReceiver(): Promise<{
  url: string;
  caPem: string;
  held: () => number;
  close: () => Promise<void>;
}> {
  const ca = await createCertificateAuthority({ commonName: 'silent receiver CA' });
  const leaf = await issueServerCertificate(ca, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  let held = 0;
  const server: Server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (request) => {
    request.resume();
    held++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/never`,
    caPem: ca.certPem,
    held: () => held,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Team A's backlog: its never-answering endpoints × its events (more than the local worker's 32 slots). */
const ENDPOINTS_A = 10;
const EVENTS_A = 5;
const BACKLOG_A = ENDPOINTS_A * EVENTS_A;

it(`team B's test event reaches B's receiver while team A's ${BACKLOG_A} deliveries to ${ENDPOINTS_A} never-answering endpoints are still queued`, async () => {
  const silent = await startSilentReceiver();
  const arrivals: string[] = [];
  const receiverB: TestReceiver = await startTestReceiver((headers) => {
    arrivals.push(String(headers['svc-event-name']));
    return 200;
  });
  const service: LocalService = await startTestService({
    extraCaPem: [silent.caPem, receiverB.caPem],
    allowPrivateTargets: true,
  });
  // Stop order: the receivers first (A's hanging attempts fail at once), then the service.
  cleanups.push(
    () => service.stop(),
    () => receiverB.close(),
    () => silent.close(),
  );

  const runtime = service.runtime;
  const teamA = await seedTeam(service.store, runtime.clock);
  const teamB = await seedTeam(service.store, runtime.clock);
  for (let index = 0; index < ENDPOINTS_A; index++) {
    await createWebhookEndpoint(runtime, teamA.principal, {
      name: `silent ${index}`,
      url: silent.url,
      events: ['project.created'],
    });
  }
  // 5 events × 10 endpoints = 50 deliveries for team A: more than the local worker's 32 slots, so a worker
  // that served messages in arrival order would start all of A's before B's (and B's would wait for A's budgets).
  for (let index = 0; index < EVENTS_A; index++)
    await createProject(runtime, teamA.principal, { name: `Noisy ${index}`, platform_type: 'discord' });
  await vi.waitFor(
    async () => expect((await listDeliveries(runtime, teamA.principal, { limit: 100 })).data).toHaveLength(BACKLOG_A),
    { timeout: 60_000, interval: 200 },
  ); // fanned out
  // A's attempts are hanging
  await vi.waitFor(() => expect(silent.held()).toBeGreaterThan(0), { timeout: 60_000, interval: 100 });

  // Team B registers its endpoint and sends a test event over REST, as a customer would.
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.baseUrl}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${teamB.token}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': crypto.randomUUID(),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const endpointB = await api('POST', '/v1/webhook-endpoints', {
    name: 'B',
    url: receiverB.url,
    events: ['project.created'],
  });
  expect(endpointB.status).toBe(201);
  const test = await api('POST', `/v1/webhook-endpoints/${endpointB.body.id}/test`);
  expect(test.status).toBe(202);

  await vi.waitFor(() => expect(arrivals).toEqual(['webhook_endpoint.test']), { timeout: 60_000, interval: 50 });
  // When B's event arrived, A's backlog had not drained: most of A's deliveries had not even been
  // attempted (each of A's attempts holds its slot for the 10-second budget).
  expect(silent.held()).toBeLessThan(BACKLOG_A);
  const deliveryB = (await api('GET', `/v1/webhook-deliveries/${test.body.id}`)).body;
  await vi.waitFor(
    async () => expect((await api('GET', `/v1/webhook-deliveries/${test.body.id}`)).body.status).toBe('succeeded'),
    { timeout: 30_000, interval: 100 },
  );
  expect(deliveryB.event_type).toBe('webhook_endpoint.test');
}, 180_000);
