/**
 * The events API through the in-process local service over REST: envelopes exactly as
 * delivered, newest first with type, project and time filters and a cursor, D10 applied for the caller,
 * resend to one endpoint, and the OpenAPI 3.1 `webhooks` section. The service's transport is a fake
 * that records each POST, so "as delivered" is compared byte for byte with what was sent.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WEBHOOK_EVENT_NAMES } from '../../shared/catalogues/webhook-events.js';
import type { WebhookRequest, WebhookTransport } from '../../shared/domain/webhook-deliveries/transport/port.js';
import type { LocalService } from '../../shared/local/service.js';
import { startTestService } from '../support/local-service.js';
import { seedTeam, seedToken, type SeededToken } from '../support/store.js';

const sent: WebhookRequest[] = [];
const transport: WebhookTransport = {
  async send(request) {
    sent.push(request);
    return {
      ok: true,
      status: 200,
      failure_kind: null,
      failure_message: null,
      duration_ms: 1,
      response_body: 'ok',
      remote_address: '203.0.113.10',
    };
  },
};

let service: LocalService;
let owner: SeededToken;

beforeAll(async () => {
  service = await startTestService({ transport });
  owner = await seedTeam(service.store, service.runtime.clock);
});
afterAll(async () => {
  await service?.stop();
});

async function api(token: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      'Idempotency-Key': crypto.randomUUID(),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

describe('events API', () => {
  it('GET /v1/events/{id} returns the envelope exactly as it was delivered; the list is newest first with filters and a cursor', async () => {
    const endpoint = await api(owner.token, 'POST', '/v1/webhook-endpoints', {
      name: 'zap',
      url: 'https://hooks.example/zap',
      events: ['project.created'],
    });
    expect(endpoint.status).toBe(201);
    const first = (await api(owner.token, 'POST', '/v1/projects', { name: 'First', platform_type: 'discord' })).body;
    const second = (await api(owner.token, 'POST', '/v1/projects', { name: 'Second', platform_type: 'telegram' })).body;
    await vi.waitFor(
      () => expect(sent.filter((request) => request.url === 'https://hooks.example/zap')).toHaveLength(2),
      { timeout: 30_000 },
    );
    const delivered = sent
      .filter((request) => request.url === 'https://hooks.example/zap')
      .map((request) => JSON.parse(request.body));

    const list = await api(owner.token, 'GET', '/v1/events?type=project.created');
    expect(list.status).toBe(200);
    const ours = list.body.data.filter((event: { project_id: string }) =>
      [first.id, second.id].includes(event.project_id),
    );
    expect(ours.map((event: { data: { project: { id: string } } }) => event.data.project.id)).toEqual([
      second.id,
      first.id,
    ]);
    for (const envelope of delivered)
      expect((await api(owner.token, 'GET', `/v1/events/${envelope.id}`)).body).toEqual(envelope);

    expect(
      (await api(owner.token, 'GET', `/v1/events?project_id=${first.id}`)).body.data.map(
        (event: { id: string }) => event.id,
      ),
    ).toEqual([delivered.find((envelope) => envelope.data.project.id === first.id).id]);
    const page = await api(owner.token, 'GET', '/v1/events?limit=1');
    expect(page.body.data).toHaveLength(1);
    expect(page.body.next_cursor).toEqual(expect.any(String));
    const next = await api(owner.token, 'GET', `/v1/events?limit=1&cursor=${page.body.next_cursor}`);
    expect(next.body.data[0].id < page.body.data[0].id).toBe(true);

    // Time bounds are inclusive; nothing of this team is older than its own creation.
    const createdAt = Date.parse(ours[1].created_at);
    expect(
      (await api(owner.token, 'GET', `/v1/events?created_before=${new Date(createdAt - 600_000).toISOString()}`)).body
        .data,
    ).toEqual([]);
    const since = (
      await api(
        owner.token,
        'GET',
        `/v1/events?type=project.created&created_after=${new Date(createdAt).toISOString()}`,
      )
    ).body.data.map((event: { id: string }) => event.id);
    expect(since).toEqual(expect.arrayContaining(ours.map((event: { id: string }) => event.id)));
    expect(
      (
        await api(
          owner.token,
          'GET',
          `/v1/events?type=project.created&created_after=${new Date(Date.parse(ours[0].created_at) + 1).toISOString()}`,
        )
      ).body.data.map((event: { id: string }) => event.id),
    ).not.toContain(ours[0].id);
    expect((await api(owner.token, 'GET', '/v1/events?type=nope')).status).toBe(422);
    expect((await api(owner.token, 'GET', '/v1/events/evt_01JZ8Q3V7K0000000000000000')).status).toBe(404);
  });

  it('a caller sees only the event types whose minimum ability it holds', async () => {
    const narrow = await seedToken(service.store, service.runtime.clock, {
      teamId: owner.principal.teamId,
      abilities: ['webhook-delivery:view-any'],
    });
    const all = (await api(owner.token, 'GET', '/v1/events?limit=100')).body.data;
    expect(all.length).toBeGreaterThan(0);
    expect((await api(narrow.token, 'GET', '/v1/events?limit=100')).body.data).toEqual([]);
    expect((await api(narrow.token, 'GET', `/v1/events/${all[0].id}`)).body.code).toBe('TOKEN_MISSING_ABILITY');
    expect((await api(narrow.token, 'GET', '/v1/events?type=project.created')).body.code).toBe('TOKEN_MISSING_ABILITY');
  });

  it('POST /v1/events/{id}/resend sends the event again to one endpoint as a new delivery', async () => {
    const endpoint = (
      await api(owner.token, 'POST', '/v1/webhook-endpoints', {
        name: 'resend',
        url: 'https://hooks.example/resend',
        events: ['plan.created'],
      })
    ).body;
    const project = (await api(owner.token, 'POST', '/v1/projects', { name: 'Resent', platform_type: 'discord' })).body;
    const event = (await api(owner.token, 'GET', `/v1/events?project_id=${project.id}`)).body.data[0];
    expect(event).toMatchObject({ type: 'project.created', project_id: project.id });
    const resent = await api(owner.token, 'POST', `/v1/events/${event.id}/resend`, { endpoint_id: endpoint.id });
    expect(resent.status).toBe(202);
    expect(resent.body).toMatchObject({
      endpoint_id: endpoint.id,
      event_id: event.id,
      event_type: 'project.created',
      status: 'pending',
      attempts: 0,
    });
    await vi.waitFor(
      () => expect(sent.filter((request) => request.url === 'https://hooks.example/resend')).toHaveLength(1),
      { timeout: 30_000 },
    );
    const [request] = sent.filter((candidate) => candidate.url === 'https://hooks.example/resend');
    expect(JSON.parse(request.body)).toEqual(event);
    expect(request.headers['SVC-Event-Id']).toBe(event.id);

    expect(
      (await api(owner.token, 'POST', `/v1/events/${event.id}/resend`, { endpoint_id: crypto.randomUUID() })).status,
    ).toBe(404);
    await api(owner.token, 'POST', `/v1/webhook-endpoints/${endpoint.id}`, { is_active: false });
    const refused = await api(owner.token, 'POST', `/v1/events/${event.id}/resend`, { endpoint_id: endpoint.id });
    expect(refused).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
  });

  it('openapi.json has a webhooks section with every event: its envelope and its data schema', async () => {
    const document = await (await fetch(`${service.baseUrl}/openapi.json`)).json();
    expect(Object.keys(document.webhooks).sort()).toEqual([...WEBHOOK_EVENT_NAMES].sort());
    const created = document.webhooks['subscription.created'].post.requestBody.content['application/json'].schema;
    expect(created.required).toEqual(
      expect.arrayContaining(['id', 'type', 'created_at', 'api_version', 'project_id', 'data']),
    );
    expect(created.properties.type).toMatchObject({ const: 'subscription.created' });
    const data = created.properties.data.$ref
      ? document.components.schemas[created.properties.data.$ref.split('/').pop()]
      : created.properties.data;
    expect(Object.keys(data.properties)).toEqual(
      expect.arrayContaining(['subscription', 'subscriber', 'plan', 'access_code']),
    );
    expect(document.paths['/v1/events'].get['x-required-scopes']).toEqual(['webhook-delivery:view-any']);
    expect(document.paths['/v1/webhook-replays/{id}'].get.operationId).toBe('getWebhookReplay');
  });
});
