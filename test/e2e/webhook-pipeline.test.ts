/**
 * The outbound-webhook pipeline end to end through the real local server process, with TIME_SCALE
 * shortening the retry timeline (waits and the 72-hour dead-letter timer divided by 100 000; the 10 s
 * response budget is not). A real HTTPS receiver (CA made here) fails or succeeds on demand and checks
 * every signature. Everything is driven through the REST API, as a customer would.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startTestReceiver, type TestReceiver } from '../support/https-receiver.js';
import { startLocalProcess, type LocalProcess } from '../support/local-process.js';
import { restCall } from '../support/rest-client.js';
import { checkSignature } from '../support/signature.js';

interface Received {
  eventId: string;
  type: string;
  projectId: string | null;
  signatureHeader: string;
  validWith: string[];
}

let service: LocalProcess;
let receiver: TestReceiver;
let receiverUrl: string;
let answer = 500;
const received: Received[] = [];
/** Secrets the receiver knows, by name; a delivery records which of them its signature matches. */
const secrets = new Map<string, string>();

/** The names of the known secrets the receiver's check (test/support/signature.ts) accepts the delivery with. */
function matchingSecrets(header: string, body: string): string[] {
  return [...secrets]
    .filter(([, secret]) => checkSignature({ header, rawBody: body, secret }) === null)
    .map(([name]) => name);
}

const api = restCall(() => service);

/**
 * Waits (vi.waitFor, 30 s) until `probe` returns a truthy value; the error names `what` and shows the server's output.
 */
async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  timeoutMs = 30_000,
): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await probe();
      if (!value) throw new Error(`still waiting for ${what}\n${service.output().slice(-3000)}`);
      return value;
    },
    { timeout: timeoutMs, interval: 100 },
  );
}

async function deliveryFor(projectId: string) {
  const eventsSeen = received.filter((item) => item.projectId === projectId);
  const list = await api('GET', '/v1/webhook-deliveries?limit=100');
  return {
    eventsSeen,
    deliveries: list.body.data as Array<{ id: string; event_id: string; status: string; attempts: number }>,
  };
}

// Each test gets its own service (its own tables) and receiver, so the tests pass alone and in any order.
beforeEach(async () => {
  answer = 500;
  received.length = 0;
  secrets.clear();
  receiver = await startTestReceiver((headers, body) => {
    const envelope = JSON.parse(body);
    const signatureHeader = String(headers['svc-signature']);
    received.push({
      eventId: String(headers['svc-event-id']),
      type: envelope.type,
      projectId: envelope.project_id,
      signatureHeader,
      validWith: matchingSecrets(signatureHeader, body),
    });
    return answer;
  });
  receiverUrl = receiver.url;
  service = await startLocalProcess({
    WEBHOOK_EXTRA_CA_FILE: receiver.caFile,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    TIME_SCALE: '100000',
  });
});

afterEach(async () => {
  await service?.stop();
  await receiver?.close();
});

/** Registers an endpoint for `project.created` at the receiver; the receiver knows its secret as `name`. */
async function newEndpoint(name: string): Promise<string> {
  const endpoint = await api('POST', '/v1/webhook-endpoints', { name, url: receiverUrl, events: ['project.created'] });
  expect(endpoint.status).toBe(201);
  secrets.set(name, endpoint.body.secret);
  return endpoint.body.id;
}

describe('webhook pipeline through the local server', () => {
  it('retries a failing delivery 8 times, dead-letters it, and a manual retry delivers it', async () => {
    const endpointId = await newEndpoint('first');
    answer = 500;
    const project = (await api('POST', '/v1/projects', { name: 'Failing', platform_type: 'telegram' })).body;

    const dead = await until('the delivery to be dead', async () => {
      const list = await api('GET', `/v1/webhook-deliveries?status=dead&endpoint_id=${endpointId}`);
      return list.body.data.find((delivery: { event_type: string }) => delivery.event_type === 'project.created');
    });
    const detail = (await api('GET', `/v1/webhook-deliveries/${dead.id}`)).body;
    expect(detail).toMatchObject({
      status: 'dead',
      attempts: 8,
      event_type: 'project.created',
      endpoint_id: endpointId,
    });
    expect(detail.dead_lettered_at).toMatch(/Z$/);
    expect(detail.attempt_log).toHaveLength(8);
    expect(detail.attempt_log.map((attempt: { attempt: number }) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    for (const attempt of detail.attempt_log)
      expect(attempt).toMatchObject({ status: 500, failure_kind: 'http_status', response_body: 'receiver is down' });
    const attempts = received.filter((item) => item.projectId === project.id);
    expect(attempts).toHaveLength(8);
    expect(new Set(attempts.map((item) => item.eventId)).size).toBe(1);
    for (const attempt of attempts) expect(attempt.validWith).toEqual(['first']);
    expect((await api('GET', `/v1/webhook-endpoints/${endpointId}`)).body).toMatchObject({
      is_active: true,
      consecutive_failures: 8,
    });

    answer = 200;
    const retried = await api('POST', `/v1/webhook-deliveries/${dead.id}/retry`);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: dead.id, status: 'pending', attempts: 0, dead_lettered_at: null });
    const succeeded = await until('the retried delivery to succeed', async () => {
      const body = (await api('GET', `/v1/webhook-deliveries/${dead.id}`)).body;
      return body.status === 'succeeded' && body;
    });
    expect(succeeded.attempts).toBe(1);
    expect((await api('GET', `/v1/webhook-endpoints/${endpointId}`)).body.consecutive_failures).toBe(0);
    expect((await api('POST', `/v1/webhook-deliveries/${dead.id}/retry`)).body.code).toBe('CONFLICT');
  });

  it('replays dead deliveries in bulk with replay-dead: 202 with a job, progress at /v1/webhook-replays/{id}', async () => {
    // Endpoints of the other tests get the project's event too: the replay is limited to this test's endpoint.
    const endpointId = await newEndpoint('first');
    answer = 500;
    const project = (await api('POST', '/v1/projects', { name: 'Replayed', platform_type: 'discord' })).body;
    const dead = await until('the second delivery to be dead', async () => {
      const { deliveries, eventsSeen } = await deliveryFor(project.id);
      return (
        eventsSeen.length === 8 &&
        deliveries.find((delivery) => delivery.event_id === eventsSeen[0].eventId && delivery.status === 'dead')
      );
    });
    answer = 200;
    const dryRun = await api('POST', '/v1/webhook-deliveries/replay-dead', {
      since_hours: 1,
      endpoint_id: endpointId,
      dry_run: true,
    });
    expect(dryRun).toMatchObject({
      status: 202,
      body: { dry_run: true, status: 'completed', matched: 1, replayed: 0 },
    });
    const replay = await api('POST', '/v1/webhook-deliveries/replay-dead', { since_hours: 1, endpoint_id: endpointId });
    expect(replay.status).toBe(202);
    expect(replay.body).toMatchObject({
      id: expect.any(String),
      status: 'running',
      matched: 1,
      filters: { status: 'dead', since_hours: 1, endpoint_id: endpointId, event_type: null },
    });
    const job = await until('the replay job to complete', async () => {
      const body = (await api('GET', `/v1/webhook-replays/${replay.body.id}`)).body;
      return body.status === 'completed' && body;
    });
    expect(job).toMatchObject({ matched: 1, replayed: 1 });
    await until(
      'the replayed delivery to succeed',
      async () => (await api('GET', `/v1/webhook-deliveries/${dead.id}`)).body.status === 'succeeded',
    );
    expect(
      (await api('POST', '/v1/webhook-deliveries/replay-dead', { since_hours: 1, endpoint_id: endpointId })).body,
    ).toMatchObject({
      matched: 0,
      replayed: 0,
      status: 'completed',
    });
  });

  it('signs with the new secret only after an API rotation, and sends a test event on demand', async () => {
    const endpointId = await newEndpoint('first');
    const rotated = await api('POST', `/v1/webhook-endpoints/${endpointId}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(secrets.get('first'));
    secrets.set('rotated', rotated.body.secret);
    const test = await api('POST', `/v1/webhook-endpoints/${endpointId}/test`);
    expect(test.status).toBe(202);
    const delivered = await until('the test event', async () =>
      received.find((item) => item.type === 'webhook_endpoint.test'),
    );
    expect(delivered.projectId).toBeNull();
    expect(delivered.validWith).toEqual(['rotated']);
    expect(delivered.signatureHeader).not.toContain('v0=');
  });

  it('disables the endpoint after 20 consecutive failures and resumes after re-enabling', async () => {
    const endpointId = await newEndpoint('first');
    answer = 500;
    // Every project makes one delivery; 3 projects × 8 attempts = 24 failed attempts ≥ 20.
    for (const name of ['One', 'Two', 'Three']) await api('POST', '/v1/projects', { name, platform_type: 'slack' });
    const disabled = await until('the endpoint to be disabled', async () => {
      const body = (await api('GET', `/v1/webhook-endpoints/${endpointId}`)).body;
      return body.is_active === false && body;
    });
    expect(disabled.disabled_at).toMatch(/Z$/);
    expect(disabled.consecutive_failures).toBeGreaterThanOrEqual(20);
    // A second, active endpoint proves the event was fanned out; the disabled one must have got nothing.
    const watcher = await api('POST', '/v1/webhook-endpoints', {
      name: 'watcher',
      url: receiverUrl,
      events: ['project.created'],
    });
    secrets.set('watcher', watcher.body.secret);
    const whileDisabled = (await api('POST', '/v1/projects', { name: 'While disabled', platform_type: 'slack' })).body;
    await until('the watcher to see the event', async () =>
      received.find((item) => item.projectId === whileDisabled.id && item.validWith.includes('watcher')),
    );
    expect(
      received.filter((item) => item.projectId === whileDisabled.id && !item.validWith.includes('watcher')),
    ).toEqual([]);
    expect((await api('DELETE', `/v1/webhook-endpoints/${watcher.body.id}`)).status).toBe(200);

    answer = 200;
    const enabled = await api('POST', `/v1/webhook-endpoints/${endpointId}`, { is_active: true });
    expect(enabled.body).toMatchObject({ is_active: true, consecutive_failures: 0, disabled_at: null });
    const project = (await api('POST', '/v1/projects', { name: 'After re-enable', platform_type: 'slack' })).body;
    await until('a fresh delivery after re-enabling', async () =>
      received.find((item) => item.projectId === project.id),
    );
  });
});
