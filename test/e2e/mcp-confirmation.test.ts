/**
 * Confirmation before destructive tool calls: without the confirmation a `destructiveHint` tool (or a call disabling a
 * webhook endpoint) changes nothing — a 2026-07-28 client that can answer gets `input_required` with a plain summary,
 * any other client an `isError` VALIDATION_FAILED result naming the `confirm` argument — and with it the tool runs
 * once (idempotent on retry).
 * `dry_run` returns the summary of a bulk tool without changing anything. The confirmation token is an HMAC under the
 * team's key on the server: a client cannot compute it without having been shown the summary.
 */
import { createHash, createHmac } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import type { LocalService } from '../../shared/local/service.js';
import { teamConfirmationKey } from '../../shared/mcp/confirmation-key.js';
import { startTestService } from '../support/local-service.js';
import { openSession, post } from '../support/mcp.js';
import { seedToken } from '../support/store.js';

const MODERN = '2026-07-28';
let service: LocalService;
let token: string;
let tokenId: string;
let sessionId: string;
let projectId: string;
let planId: string;

/** Calls a tool over the 2025-era session; returns the JSON-RPC result. */
async function legacyCall(name: string, args: Record<string, unknown>): Promise<any> {
  const response = await post(
    service.mcpUrl,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
    { token, sessionId },
  );
  expect(response.status, response.text).toBe(200);
  expect(response.json.error, response.text).toBeUndefined();
  return response.json.result;
}

/** Calls a tool as a 2026-07-28 client that declared `capabilities`; returns the JSON-RPC result. */
async function modernCall(name: string, args: Record<string, unknown>, capabilities: object = {}): Promise<any> {
  const _meta = {
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': capabilities,
  };
  const response = await post(
    service.mcpUrl,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta } },
    { token, protocolVersion: MODERN, headers: { 'Mcp-Method': 'tools/call', 'Mcp-Name': name } },
  );
  expect(response.status, response.text).toBe(200);
  expect(response.json.result?.structuredContent?.code, response.text).not.toBe('INTERNAL_ERROR');
  return response.json.result;
}

/** Generates `count` access codes of the test plan over the session; returns their ids. */
async function generate(count: number): Promise<string[]> {
  const result = await legacyCall('generate_access_codes', { project_id: projectId, plan_id: planId, count });
  return result.structuredContent.codes.map((code: { id: string }) => code.id);
}

async function statusOf(codeId: string): Promise<string> {
  const listed = await legacyCall('list_access_codes', { project_id: projectId, limit: 100 });
  return listed.structuredContent.data.find((code: { id: string }) => code.id === codeId).status;
}

beforeAll(async () => {
  service = await startTestService();
  ({ token, id: tokenId } = await seedToken(service.store, service.runtime.clock, { teamId: service.demoTeamId }));
  sessionId = await openSession(service.mcpUrl, token);
  projectId = (await legacyCall('create_project', { name: 'Confirmations', platform_type: 'web' })).structuredContent
    .id;
  const plan = { project_id: projectId, name: 'Monthly', amount: 900, currency: 'EUR', interval: 'month' };
  planId = (await legacyCall('create_plan', plan)).structuredContent.id;
});

afterAll(async () => {
  await service?.stop();
});

describe('confirmation before destructive calls', () => {
  it('publishes confirm on destructive tools and dry_run on them and the bulk tools', async () => {
    const response = await post(service.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { token, sessionId });
    const tools = new Map<string, any>(response.json.result.tools.map((tool: any) => [tool.name, tool]));
    for (const definition of TOOL_DEFINITIONS) {
      const properties = Object.keys(tools.get(definition.name).inputSchema.properties ?? {});
      const gated = definition.annotations.destructiveHint === true || definition.name === 'update_webhook_endpoint';
      const bulk = ['generate_access_codes', 'replay_dead_webhook_deliveries'].includes(definition.name);
      expect(properties.includes('confirm'), definition.name).toBe(gated || bulk);
      expect(properties.includes('dry_run'), definition.name).toBe(gated || bulk);
    }
  });

  it('tells a 2025-era client how to confirm, changes nothing, then runs once with the token (idempotent on retry)', async () => {
    const [codeId] = await generate(1);
    const refused = await legacyCall('revoke_access_code', { id: codeId });
    expect(refused.isError).toBe(true);
    expect(refused.structuredContent).toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [{ path: 'arguments.confirm', message: expect.stringMatching(/^Must be "cfm_/) }],
    });
    expect(refused.structuredContent.detail).toContain(`Revoke access code ${codeId}.`);
    expect(await statusOf(codeId)).toBe('active');

    const confirm = /confirm: "(cfm_[^"]+)"/.exec(refused.structuredContent.detail)![1];
    const key = crypto.randomUUID();
    const revoked = await legacyCall('revoke_access_code', { id: codeId, confirm, idempotency_key: key });
    expect(revoked.isError).toBeFalsy();
    expect(revoked.structuredContent).toMatchObject({ id: codeId, status: 'revoked' });
    const replayed = await legacyCall('revoke_access_code', { id: codeId, confirm, idempotency_key: key });
    expect(replayed).toMatchObject({
      structuredContent: revoked.structuredContent,
      _meta: { 'idempotent-replay': true },
    });
    // The token names this call only: another code's revocation needs its own.
    const [other] = await generate(1);
    expect((await legacyCall('revoke_access_code', { id: other, confirm })).isError).toBe(true);
    expect(await statusOf(other)).toBe('active');
  });

  it('refuses a token computed without the server key: the unkeyed hash of the call, or the token of another team', async () => {
    const [codeId] = await generate(1);
    const refused = await legacyCall('revoke_access_code', { id: codeId });
    const shown = /confirm: "(cfm_[^"]+)"/.exec(refused.structuredContent.detail)![1];
    const changes = { id: codeId };
    const unkeyed = `cfm_${createHash('sha256')
      .update(JSON.stringify([tokenId, 'revoke_access_code', changes]))
      .digest('base64url')
      .slice(0, 22)}`;
    expect(unkeyed).not.toBe(shown);
    expect((await legacyCall('revoke_access_code', { id: codeId, confirm: unkeyed })).isError).toBe(true);
    expect(await statusOf(codeId)).toBe('active');
    // The key is the team's: another team's key makes another token for the same call by the same token id.
    const ours = createHmac('sha256', await teamConfirmationKey(service.runtime, service.demoTeamId));
    const theirs = createHmac('sha256', await teamConfirmationKey(service.runtime, crypto.randomUUID()));
    const call = JSON.stringify([tokenId, 'revoke_access_code', changes]);
    expect(`cfm_${ours.update(call).digest('base64url').slice(0, 22)}`).toBe(shown);
    expect(`cfm_${theirs.update(call).digest('base64url').slice(0, 22)}`).not.toBe(shown);
  });

  it('answers input_required with the summary on 2026-07-28 and runs after the v2 client confirmed', async () => {
    const [codeId] = await generate(1);
    const asked = await modernCall('revoke_access_code', { id: codeId }, { elicitation: { form: {} } });
    expect(asked.resultType, JSON.stringify(asked)).toBe('input_required');
    expect(asked.inputRequests.confirm).toMatchObject({
      method: 'elicitation/create',
      params: { message: `Revoke access code ${codeId}. Confirm?` },
    });
    expect(await statusOf(codeId)).toBe('active');

    const questions: string[] = [];
    const client = new ModernClient(
      { name: 'v2-confirming', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      questions.push(request.params.message);
      return { action: 'accept', content: { confirm: true } };
    });
    await client.connect(
      new ModernTransport(new URL(service.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    const result = await client.callTool({ name: 'revoke_access_code', arguments: { id: codeId } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ id: codeId, status: 'revoked' });
    expect(questions).toEqual([`Revoke access code ${codeId}. Confirm?`]);

    const [declinedId] = await generate(1);
    client.setRequestHandler('elicitation/create', async () => ({ action: 'decline' }));
    const declined = await client.callTool({ name: 'revoke_access_code', arguments: { id: declinedId } });
    expect(declined.isError).toBe(true);
    expect(await statusOf(declinedId)).toBe('active');
    await client.close();
  });

  it('refuses a 2026-07-28 client without elicitation with the confirm instructions', async () => {
    const [codeId] = await generate(1);
    const refused = await modernCall('revoke_access_code', { id: codeId });
    expect(refused).toMatchObject({ isError: true, structuredContent: { code: 'VALIDATION_FAILED' } });
    expect(await statusOf(codeId)).toBe('active');
  });

  it('asks before a webhook endpoint is disabled, not before other changes to it', async () => {
    const endpoint = (
      await legacyCall('create_webhook_endpoint', {
        name: 'Confirmed',
        url: 'https://receiver.example/hooks',
        events: ['project.created'],
      })
    ).structuredContent;
    const isActive = async () =>
      (await legacyCall('get_webhook_endpoint', { id: endpoint.id })).structuredContent.is_active as boolean;

    const renamed = await legacyCall('update_webhook_endpoint', { id: endpoint.id, name: 'Renamed' });
    expect(renamed.isError).toBeFalsy();
    expect(renamed.structuredContent).toMatchObject({ name: 'Renamed', is_active: true });

    const refused = await legacyCall('update_webhook_endpoint', { id: endpoint.id, is_active: false });
    expect(refused).toMatchObject({ isError: true, structuredContent: { code: 'VALIDATION_FAILED' } });
    expect(refused.structuredContent.detail).toContain(
      `Update webhook endpoint ${endpoint.id} and disable it: no deliveries until it is enabled again.`,
    );
    expect(await isActive()).toBe(true);

    const confirm = /confirm: "(cfm_[^"]+)"/.exec(refused.structuredContent.detail)![1];
    const disabled = await legacyCall('update_webhook_endpoint', { id: endpoint.id, is_active: false, confirm });
    expect(disabled.isError).toBeFalsy();
    expect(await isActive()).toBe(false);
    // Enabling it again needs no confirmation.
    expect((await legacyCall('update_webhook_endpoint', { id: endpoint.id, is_active: true })).isError).toBeFalsy();
    expect(await isActive()).toBe(true);
  });

  it('returns the summary of a dry run of a bulk tool and generates nothing', async () => {
    const before = (await legacyCall('list_access_codes', { project_id: projectId, limit: 100 })).structuredContent;
    const args = { project_id: projectId, plan_id: planId, count: 250, dry_run: true };
    const dry = await legacyCall('generate_access_codes', args);
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({
      tool: 'generate_access_codes',
      dry_run: true,
      summary: expect.stringContaining('250 new codes'),
      changes: { count: 250, plan_id: planId },
    });
    const after = (await legacyCall('list_access_codes', { project_id: projectId, limit: 100 })).structuredContent;
    expect(after.data).toHaveLength(before.data.length);
  });
});
