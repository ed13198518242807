/**
 * End to end through the real local server process (`bin/local.ts`, as `npm start` runs it), with real
 * clients: `fetch` for REST, the MCP SDK `Client` over `StreamableHTTPClientTransport`, the operator
 * CLI, and an HTTPS receiver with a CA made here that verifies signatures as the interface tells
 * receivers to (constant-time compare, 300-second window).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startTestReceiver, type TestReceiver } from '../support/https-receiver.js';
import { runCli, startLocalProcess, type LocalProcess } from '../support/local-process.js';
import { checkSignature, type SignatureRejection } from '../support/signature.js';
import { ABILITIES } from '../../shared/catalogues/abilities.js';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { WEBHOOK_EVENTS } from '../../shared/catalogues/webhook-events.js';

interface ReceivedDelivery {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The receiver's verdict on `SVC-Signature` (test/support/signature.ts): null when accepted. */
  signature: SignatureRejection | null;
}

let service: LocalProcess;
let receiver: TestReceiver;
let receiverUrl: string;
const received: ReceivedDelivery[] = [];
let webhookSecret = '';

async function rest(path: string, init: RequestInit & { token?: string } = {}) {
  const headers = new Headers(init.headers);
  if (init.token) headers.set('Authorization', `Bearer ${init.token}`);
  if (init.body) headers.set('Content-Type', 'application/json');
  const response = await fetch(`${service.baseUrl}${path}`, { ...init, headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

async function mcpClient(token: string): Promise<Client> {
  const client = new Client({ name: 'e2e-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(service.mcpUrl), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

beforeAll(async () => {
  receiver = await startTestReceiver((headers, body) => {
    received.push({
      headers,
      body,
      signature: checkSignature({ header: headers['svc-signature'], rawBody: body, secret: webhookSecret }),
    });
    return 200;
  });
  receiverUrl = receiver.url;
  service = await startLocalProcess({ WEBHOOK_EXTRA_CA_FILE: receiver.caFile, WEBHOOK_ALLOW_PRIVATE_TARGETS: '1' });
});

afterAll(async () => {
  const code = await service?.stop();
  expect(code).toBe(0);
  await receiver?.close();
});

describe('walking skeleton, end to end', () => {
  it('answers the smoke test with the token’s team, and 401 problem JSON without a valid token', async () => {
    const ok = await rest('/v1/teams/current', { token: service.demoToken });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: service.demoTeamId, name: 'Demo team' });
    for (const token of [undefined, 'nonsense', `svc_live_01JZZZZZZZZZZZZZZZZZZZZZZZ_${'a'.repeat(44)}`]) {
      const denied = await rest('/v1/teams/current', { token });
      expect(denied.status).toBe(401);
      expect(denied.headers.get('content-type')).toContain('application/problem+json');
      expect(denied.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(denied.body.code).toBe('AUTHENTICATION_REQUIRED');
    }
  });

  it('mints, lists and revokes tokens with the operator CLI; revocation applies to the next call', async () => {
    const team = await runCli(['team', 'create', '--name', 'CLI team'], service.env);
    expect(team.code).toBe(0);
    const teamId = JSON.parse(team.stdout).id as string;
    // The README's example token: no team ability, yet the smoke test answers (DESIGN D2).
    const minted = await runCli(
      ['token', 'create', '--team', teamId, '--abilities', 'mcp:full,project:view-any', '--name', 'ci'],
      service.env,
    );
    expect(minted.code).toBe(0);
    const token = JSON.parse(minted.stdout);
    expect(token.token).toMatch(/^svc_live_[0-9A-Z]{26}_[0-9A-Za-z]{40,}$/);
    expect(token.scopes).toEqual([`scope:team:${teamId}`]);
    expect((await rest('/v1/teams/current', { token: token.token })).body).toMatchObject({
      id: teamId,
      name: 'CLI team',
    });

    const listed = await runCli(['token', 'list', '--team', teamId], service.env);
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: token.id, revoked_at: null })]);
    expect(listed.stdout).not.toContain(token.token.split('_').at(-1));

    const revoked = await runCli(['token', 'revoke', token.id], service.env);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout).revoked_at).toMatch(/Z$/);
    const after = await rest('/v1/teams/current', { token: token.token });
    expect(after.status).toBe(401);
    expect(after.body.code).toBe('AUTHENTICATION_REQUIRED');

    const bad = await runCli(['token', 'create', '--team', 'not-a-uuid', '--abilities', 'team:view'], service.env);
    expect(bad.code).not.toBe(0);
    expect(JSON.parse(bad.stderr).code).toBe('VALIDATION_FAILED');
  });

  it('creates, lists and reads projects over REST, and replays a retried write', async () => {
    const key = crypto.randomUUID();
    const init = {
      method: 'POST',
      token: service.demoToken,
      headers: { 'Idempotency-Key': key },
      body: JSON.stringify({ name: 'Book club', platform_type: 'discord' }),
    };
    const created = await rest('/v1/projects', init);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'Book club', platform_type: 'discord', status: 'active' });
    const replay = await rest('/v1/projects', init);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replay')).toBe('true');
    expect(replay.body).toEqual(created.body);
    const list = await rest('/v1/projects', { token: service.demoToken });
    expect(list.body.data.filter((project: { id: string }) => project.id === created.body.id)).toHaveLength(1);
    expect(list.body).toHaveProperty('next_cursor');
    expect((await rest(`/v1/projects/${created.body.id}`, { token: service.demoToken })).body).toEqual(created.body);
    expect((await rest(`/v1/projects/${crypto.randomUUID()}`, { token: service.demoToken })).body.code).toBe(
      'NOT_FOUND',
    );
  });

  it('rejects a non-HTTPS webhook endpoint and shows the secret only at creation', async () => {
    const insecure = await rest('/v1/webhook-endpoints', {
      method: 'POST',
      token: service.demoToken,
      body: JSON.stringify({ name: 'x', url: 'http://example.com/hook', events: ['project.created'] }),
    });
    expect(insecure.status).toBe(422);
    expect(insecure.body.code).toBe('VALIDATION_FAILED');
    expect(insecure.body.errors[0].path).toBe('body.url');
  });

  it('serves openapi.json with x-required-scopes on every operation, and webhook-events.json', async () => {
    const document = (await rest('/openapi.json')).body;
    expect(document.openapi).toMatch(/^3\.1/);
    const operations = Object.values(
      document.paths as Record<string, Record<string, { 'x-required-scopes': string[] }>>,
    ).flatMap((path) => Object.values(path));
    expect(operations.length).toBeGreaterThanOrEqual(20);
    for (const operation of operations) expect(Array.isArray(operation['x-required-scopes'])).toBe(true);
    expect(document.paths['/v1/activity'].get['x-required-scopes']).toEqual(['activity:read']);
    const events = (await rest('/webhook-events.json')).body;
    expect(events.count).toBe(WEBHOOK_EVENTS.length);
    expect(events.events.map((event: { name: string }) => event.name)).toContain('subscription.created');
  });

  it('lists the tools and resources to an MCP client, gates on mcp:full and per-tool abilities, and logs every call', async () => {
    const client = await mcpClient(service.demoToken);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(TOOL_DEFINITIONS.length);
    const listProjects = tools.find((tool) => tool.name === 'list_projects')!;
    expect(listProjects.description).toContain('project:view-any');
    expect(listProjects.outputSchema).toBeDefined();
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri).sort()).toEqual([
      'service://enums/ability',
      'service://enums/error-code',
      'service://enums/payment-provider',
      'service://enums/platform-type',
      'service://enums/subscription-status',
      'service://enums/webhook-event',
    ]);
    const abilities = await client.readResource({ uri: 'service://enums/ability' });
    const envelope = JSON.parse((abilities.contents[0] as { text: string }).text);
    expect(envelope).toMatchObject({ version: '2026-05-01', count: ABILITIES.length });
    expect(envelope.items[0]).toHaveProperty('category');

    const created = await client.callTool({
      name: 'create_project',
      arguments: { name: 'Chess club', platform_type: 'telegram' },
    });
    expect(created.isError).toBeFalsy();
    const project = created.structuredContent as { id: string };
    const read = await client.callTool({ name: 'get_project', arguments: { project_id: project.id } });
    expect(read.structuredContent).toEqual(project);
    const listed = await client.callTool({ name: 'list_projects', arguments: {} });
    expect((listed.structuredContent as { data: { id: string }[] }).data.map((item) => item.id)).toContain(project.id);
    await client.close();

    // The interface's example: mcp:full + project:view-any may call list_projects but not list_subscribers.
    const teamId = service.demoTeamId;
    const narrow = JSON.parse(
      (await runCli(['token', 'create', '--team', teamId, '--abilities', 'mcp:full,project:view-any'], service.env))
        .stdout,
    );
    const narrowClient = await mcpClient(narrow.token);
    expect((await narrowClient.callTool({ name: 'list_projects', arguments: {} })).isError).toBeFalsy();
    const refused = await narrowClient.callTool({ name: 'list_subscribers', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({ code: 'TOKEN_MISSING_ABILITY', status: 403 });
    await narrowClient.close();

    // Without mcp:full the server answers 403 before any JSON-RPC is processed.
    const noGate = JSON.parse(
      (await runCli(['token', 'create', '--team', teamId, '--abilities', 'project:view-any'], service.env)).stdout,
    );
    const gated = await fetch(service.mcpUrl, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${noGate.token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
      }),
    });
    expect(gated.status).toBe(403);
    expect((await gated.json()).code).toBe('TOKEN_MISSING_ABILITY');

    const activity = await rest(`/v1/activity?token_id=${narrow.id}`, { token: service.demoToken });
    const operations = activity.body.data.map((entry: { operation: string; outcome: string; token_id: string }) => [
      entry.operation,
      entry.outcome,
      entry.token_id,
    ]);
    expect(operations).toEqual(
      expect.arrayContaining([
        ['list_projects', 'ok', narrow.id],
        ['list_subscribers', 'TOKEN_MISSING_ABILITY', narrow.id],
      ]),
    );
  });

  it('delivers a signed project.created to an HTTPS receiver that verifies it', async () => {
    const endpoint = await rest('/v1/webhook-endpoints', {
      method: 'POST',
      token: service.demoToken,
      headers: { 'Idempotency-Key': crypto.randomUUID() },
      body: JSON.stringify({ name: 'receiver', url: receiverUrl, events: ['project.created'] }),
    });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.secret).toMatch(/^whsec_/);
    webhookSecret = endpoint.body.secret;
    const read = await rest(`/v1/webhook-endpoints/${endpoint.body.id}`, { token: service.demoToken });
    expect(read.body).not.toHaveProperty('secret');
    expect(JSON.stringify(read.body)).not.toContain(webhookSecret);

    const client = await mcpClient(service.demoToken);
    const created = await client.callTool({
      name: 'create_project',
      arguments: { name: 'Webhook club', platform_type: 'slack' },
    });
    await client.close();
    const project = created.structuredContent as { id: string };

    const delivery = await vi.waitFor(
      () => {
        const found = received.find((item) => JSON.parse(item.body).project_id === project.id);
        if (!found) throw new Error(`no delivery yet\n${service.output()}`);
        return found;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(delivery.signature).toBeNull(); // valid and within the 300-second window
    const envelope = JSON.parse(delivery.body);
    expect(envelope).toMatchObject({
      type: 'project.created',
      api_version: '2026-05-01',
      project_id: project.id,
      data: { project },
    });
    expect(envelope.id).toMatch(/^evt_[0-9A-Z]{26}$/);
    expect(delivery.headers['svc-event-id']).toBe(envelope.id);
    expect(delivery.headers['svc-event-name']).toBe('project.created');
    expect(new Date(envelope.created_at).toISOString()).toBe(envelope.created_at);
  });
});
