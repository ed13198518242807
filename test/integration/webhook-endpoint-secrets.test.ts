/**
 * Webhook endpoint signing secrets at rest (DESIGN D8, D16): sealed with the credentials' envelope
 * encryption, never in clear in any item (endpoint, deliveries, outbox, activity, idempotency record), never
 * in a read (REST, MCP, dashboard), opened by the dispatcher once per process and endpoint revision, and
 * still signing deliveries that `standardwebhooks` and the `SVC-Signature` check verify — with both secrets
 * during a dashboard rotation's window. Against DynamoDB Local, with a fake transport, a manual clock and
 * a local key-encryption key that counts its data-key unwraps.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import {
  CredentialDecryptionError,
  type KeyEncryptionKey,
  type SealedSecret,
} from '../../shared/credentials/envelope.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { fanOutEvent } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { AttemptResult, WebhookRequest } from '../../shared/domain/webhook-deliveries/transport/port.js';
import type { DeliveryMessage } from '../../shared/runtime.js';
import { rotateWebhookEndpointSecret, updateWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import { openEndpointSecrets } from '../../shared/domain/webhook-endpoints/secrets.js';
import type { StoredEvent } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import { checkSignature } from '../support/signature.js';
import { scanTable } from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { createTestRuntime, seedTeam, testClock, type SeededToken, type TestRuntime } from '../support/store.js';

const OK: AttemptResult = {
  ok: true,
  status: 200,
  failure_kind: null,
  failure_message: null,
  duration_ms: 5,
  response_body: 'ok',
  remote_address: '203.0.113.10',
};

let clock: ManualClock;
let runtime: TestRuntime;
let seeded: { team: { id: string } } & SeededToken;
let requests: WebhookRequest[];
/** The encryption context of every data key unwrapped, in order. */
let unwraps: Record<string, string>[];

/** A local key-encryption key that records each data-key unwrap (a KMS `Decrypt` on AWS). */
function countingKeyEncryptionKey(): KeyEncryptionKey {
  const inner = localKeyEncryptionKey(randomBytes(32));
  return {
    kind: inner.kind,
    generateDataKey: (context) => inner.generateDataKey(context),
    unwrapDataKey: (wrapped, context) => {
      unwraps.push({ ...context });
      return inner.unwrapDataKey(wrapped, context);
    },
  };
}

beforeEach(async () => {
  clock = testClock();
  requests = [];
  unwraps = [];
  runtime = await createTestRuntime({
    clock,
    transport: {
      async send(request) {
        requests.push(request);
        return { ...OK };
      },
    },
  });
  runtime.integrations = {
    keyEncryptionKey: countingKeyEncryptionKey(),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: 'http://127.0.0.1:9',
    retry: { retries: 0, minTimeoutMs: 0 },
  };
  seeded = await seedTeam(runtime.store, clock);
  await relayOutbox(runtime, clock.nowMs());
  runtime.drain();
});

/**
 * Creates an endpoint through REST with an `Idempotency-Key` (so the create's idempotency record is stored); returns
 * the answer.
 */
async function createEndpoint(idempotencyKey: string = randomUUID()): Promise<{ id: string; secret: string }> {
  const reply = await rest(runtime, {
    method: 'POST',
    path: '/v1/webhook-endpoints',
    token: seeded.token,
    headers: { 'Idempotency-Key': idempotencyKey },
    body: { name: 'Sealed', url: 'https://receiver.example/hooks', events: ['project.created'] },
  });
  expect(reply.status).toBe(201);
  return reply.json as { id: string; secret: string };
}

/** Creates a project and fans its event out to the one subscribed endpoint; returns the attempt's queued message. */
async function queueOne(): Promise<DeliveryMessage> {
  const project = await createProject(runtime, seeded.principal, {
    name: `Project ${randomUUID().slice(0, 8)}`,
    platform_type: 'discord',
  });
  const found = await runtime.store.document.send(
    new QueryCommand({
      TableName: runtime.store.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `TEAM#${seeded.team.id}`, ':prefix': 'EVENT#' },
      ConsistentRead: true,
    }),
  );
  const event = (found.Items as StoredEvent[]).find(
    (candidate) => (candidate.data as { project?: { id: string } }).project?.id === project.id,
  )!;
  expect(await fanOutEvent(runtime, event)).toBe(1);
  const { queued } = runtime.drain();
  expect(queued).toHaveLength(1);
  return queued[0].message;
}

/** {@link queueOne}, then runs the attempt; returns the POST. */
async function deliverOne(): Promise<WebhookRequest> {
  expect(await processDeliveryMessage(runtime, await queueOne())).toBe('succeeded');
  return requests.at(-1)!;
}

/** Whether `request` verifies with `secret` by both the `SVC-Signature` check and `standardwebhooks`. */
function verifies(request: WebhookRequest, secret: string): boolean {
  const legacy =
    checkSignature({
      header: request.headers['SVC-Signature'],
      rawBody: request.body,
      secret,
      nowSeconds: Math.floor(clock.nowMs() / 1000),
    }) === null;
  let standard = true;
  try {
    new StandardWebhook(secret).verify(request.body, request.headers);
  } catch {
    standard = false;
  }
  expect(standard, 'standardwebhooks and SVC-Signature agree').toBe(legacy);
  return legacy;
}

/** Every item of both tables, as text. */
async function everythingStored(): Promise<string> {
  return JSON.stringify([
    await scanTable(runtime.store),
    await scanTable(runtime.store, runtime.store.deadLetterTableName),
  ]);
}

/** The endpoints's opened secrets unwrapped so far. */
const endpointUnwraps = (endpointId: string) => unwraps.filter((context) => context.endpoint_id === endpointId).length;

describe('secrets at rest (D16)', () => {
  it('stores neither the current nor the previous secret in clear in any item, the create’s idempotency record included, yet replays the create and signs with both', async () => {
    const idempotencyKey = randomUUID();
    const created = await createEndpoint(idempotencyKey);
    expect(created.secret).toMatch(/^whsec_/);
    const first = await deliverOne();
    expect(verifies(first, created.secret)).toBe(true);

    const rotated = await rotateWebhookEndpointSecret(runtime, seeded.principal, created.id, 'dashboard');
    const dual = await deliverOne();
    expect(verifies(dual, rotated.secret)).toBe(true);
    expect(verifies(dual, created.secret)).toBe(true);
    expect(verifies(dual, `whsec_${randomBytes(32).toString('base64')}`)).toBe(false);

    // The endpoint item holds the secrets only sealed (local key here; KMS on AWS), never a `secret` attribute.
    const item = (await runtime.store.get(keys.webhookEndpoint(seeded.team.id, created.id)))!;
    expect(item).not.toHaveProperty('secret');
    expect(item).not.toHaveProperty('previous_secret');
    expect(item.sealed_secrets).toMatchObject({ v: 1, kek: 'local' });
    // Every item of both tables: endpoint, deliveries, outbox events, activity, the idempotency record.
    const stored = await everythingStored();
    for (const secret of [created.secret, rotated.secret]) {
      expect(stored).not.toContain(secret);
      expect(stored).not.toContain(secret.slice('whsec_'.length));
    }
    expect(stored).not.toContain(idempotencyKey);

    // The key holder's retry of the create is answered with the same secret (the record is sealed under the key).
    const replay = await rest(runtime, {
      method: 'POST',
      path: '/v1/webhook-endpoints',
      token: seeded.token,
      headers: { 'Idempotency-Key': idempotencyKey },
      body: { name: 'Sealed', url: 'https://receiver.example/hooks', events: ['project.created'] },
    });
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.json).toMatchObject({ id: created.id, secret: created.secret });
  });

  it('binds the sealed secrets to their endpoint: a copy moved to another endpoint does not open', async () => {
    const one = await createEndpoint();
    const other = await createEndpoint();
    const sealed = (await runtime.store.get(keys.webhookEndpoint(seeded.team.id, one.id)))!
      .sealed_secrets as SealedSecret;
    const key = runtime.integrations!.keyEncryptionKey;
    expect(await openEndpointSecrets(key, seeded.team.id, one.id, sealed)).toEqual({
      secret: one.secret,
      previous_secret: null,
    });
    await expect(openEndpointSecrets(key, seeded.team.id, other.id, sealed)).rejects.toBeInstanceOf(
      CredentialDecryptionError,
    );
  });

  it('never shows a secret in a read: REST get and list, the MCP tools, the dashboard page', async () => {
    const created = await createEndpoint();
    const rotated = await rotateWebhookEndpointSecret(runtime, seeded.principal, created.id, 'dashboard');
    const secrets = [created.secret, rotated.secret];
    const reads = [
      await rest(runtime, { method: 'GET', path: `/v1/webhook-endpoints/${created.id}`, token: seeded.token }),
      await rest(runtime, { method: 'GET', path: '/v1/webhook-endpoints', token: seeded.token }),
    ];
    for (const reply of reads) expect(reply.status).toBe(200);
    const tools = [
      await tool(runtime, seeded.principal, 'get_webhook_endpoint', { id: created.id }),
      await tool(runtime, seeded.principal, 'list_webhook_endpoints', {}),
    ];
    for (const result of tools) expect(result.isError ?? false).toBe(false);
    const owner = await ensureTeamOwner(runtime, seeded.team.id, {
      email: `owner-${randomUUID()}@example.com`,
      name: 'Owner',
    });
    const session = await createSession(runtime.store, clock, {
      teamId: seeded.team.id,
      memberId: owner.id,
      state: 'active',
      method: 'passkey',
    });
    const page = await handleDashboardRequest(runtime, {
      version: '2.0',
      routeKey: '$default',
      rawPath: `/dashboard/webhooks/endpoints/${created.id}`,
      rawQueryString: '',
      cookies: [`dashboard_session=${session.cookieValue}`],
      headers: { host: 'localhost:3000', 'x-forwarded-proto': 'http' },
      requestContext: {
        http: { method: 'GET', path: `/dashboard/webhooks/endpoints/${created.id}` },
        requestId: randomUUID(),
      },
      isBase64Encoded: false,
    } as never);
    expect(page.statusCode).toBe(200);
    // The page still tells the dual-signing window (from the item's window end, not the sealed secrets).
    expect(page.body).toContain('Rotated: deliveries are signed with the new secret');
    const shown = JSON.stringify([reads.map((reply) => reply.json), tools, page.body]);
    for (const secret of secrets) expect(shown).not.toContain(secret);
    expect(shown).not.toContain('sealed_secrets');
  });
});

describe('opening for signing (D16)', () => {
  it('unwraps one data key per process and endpoint revision across many deliveries; a rotation or an update is one more', async () => {
    const created = await createEndpoint();
    expect(endpointUnwraps(created.id)).toBe(0);
    for (let index = 0; index < 5; index++) expect(verifies(await deliverOne(), created.secret)).toBe(true);
    expect(endpointUnwraps(created.id)).toBe(1);

    // An API rotation seals anew without opening the old secret; its first delivery opens the new revision, once.
    const rotated = await rotateWebhookEndpointSecret(runtime, seeded.principal, created.id, 'api');
    expect(endpointUnwraps(created.id)).toBe(1);
    for (let index = 0; index < 3; index++) expect(verifies(await deliverOne(), rotated.secret)).toBe(true);
    expect(endpointUnwraps(created.id)).toBe(2);

    // A dashboard rotation opens the current secret to keep it signing (v0), then deliveries open the new revision
    // once.
    const dual = await rotateWebhookEndpointSecret(runtime, seeded.principal, created.id, 'dashboard');
    expect(endpointUnwraps(created.id)).toBe(3);
    for (let index = 0; index < 3; index++) {
      const request = await deliverOne();
      expect(verifies(request, dual.secret) && verifies(request, rotated.secret)).toBe(true);
    }
    expect(endpointUnwraps(created.id)).toBe(4);

    // Any change that raises the revision (here the url) is opened again at its first delivery.
    await updateWebhookEndpoint(runtime, seeded.principal, created.id, { url: 'https://moved.example/hooks' });
    for (let index = 0; index < 2; index++) expect((await deliverOne()).url).toBe('https://moved.example/hooks');
    expect(endpointUnwraps(created.id)).toBe(5);
  });

  it('sends nothing and gives the slot back when the secrets do not open, and opens them at the next attempt', async () => {
    const created = await createEndpoint();
    const key = runtime.integrations!.keyEncryptionKey;
    let refuse = true;
    runtime.integrations = {
      ...runtime.integrations!,
      keyEncryptionKey: {
        ...key,
        unwrapDataKey: (wrapped, context) =>
          refuse ? Promise.reject(new CredentialDecryptionError()) : key.unwrapDataKey(wrapped, context),
      },
    };
    const message = await queueOne();
    await expect(processDeliveryMessage(runtime, message)).rejects.toBeInstanceOf(CredentialDecryptionError);
    expect(requests).toEqual([]);
    expect((await runtime.store.get(keys.webhookEndpoint(seeded.team.id, created.id)))?.in_flight).toEqual({});
    // Nothing was kept of the refusal: once the key answers, the next delivery opens the secrets and verifies.
    refuse = false;
    expect(verifies(await deliverOne(), created.secret)).toBe(true);
  });
});
