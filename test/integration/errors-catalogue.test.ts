/**
 * Errors (DESIGN D1): every failure on every surface is an RFC 9457 problem document whose `code` is in
 * `service://enums/error-code` (shared/catalogues/error-codes.ts), with the catalogue's status, title,
 * hint and docs_url, and `request_id` equal to the `X-Request-Id` header.
 *
 * 1. The catalogue walk: every code is triggered at least once, on every surface that can produce it
 *    (REST, tool result, tool-server HTTP). Where a surface cannot produce a code the table says why.
 *    A code added to the catalogue without a trigger here fails this file.
 * 2. Bad input never gives a 500: malformed JSON, wrong or missing content types, bodies over 256 KiB,
 *    `null` / arrays / strings where objects are expected, unknown fields, wrong types, unknown query
 *    parameters, out-of-range limits, forged or foreign cursors, bad path parameters and
 *    percent-encoding, unknown routes and methods — each gets its code (with field-level `errors` for
 *    VALIDATION_FAILED), and none writes anything.
 */

import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../shared/catalogues/error-codes.js';
import { consumeRateLimit } from '../../shared/limits/rate-limit.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { MAX_BODY_BYTES } from '../../shared/http/rest-handler.js';
import {
  domainSnapshot,
  expectProblem,
  expectRestProblem,
  expectToolProblem,
  failingStore,
  gatedStore,
  withStore,
} from '../support/guarantees.js';
import { mcpPost, rest, tool, toolsCall, type McpReply } from '../support/calls.js';
import { seedTeam, seedToken, type TestRuntime } from '../support/store.js';
import { lockTeam } from '../support/billing.js';
import { TIER_LIMITS } from '../../shared/domain/billing/schema.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import { clock, randomIp, runtime, world, useErrorsFixture } from '../support/fixtures/errors.js';

useErrorsFixture();

/** Asserts a tool-server HTTP answer is a problem document with `code` (D1 on the MCP edge). */
function expectHttpProblem(reply: McpReply, code: ErrorCode) {
  expect(reply.headers.get('content-type')).toContain('application/problem+json');
  const problem = expectProblem(reply.json, code);
  expect(reply.status).toBe(problem.status);
  expect(problem.request_id).toBe(reply.headers.get('x-request-id'));
}

interface Trigger {
  rest?: () => Promise<unknown>;
  tool?: () => Promise<unknown>;
  mcpHttp?: () => Promise<unknown>;
  /** The dashboard (DESIGN D21): its JSON answers are problem documents too. */
  dashboard?: () => Promise<unknown>;
  /** Why a surface cannot produce the code. */
  notOn?: string;
}

/** One entry per catalogue code: how each surface produces it. */
const TRIGGERS: Record<ErrorCode, Trigger> = {
  AUTHENTICATION_REQUIRED: {
    rest: async () => {
      for (const token of [undefined, 'garbage', `svc_live_01JZZZZZZZZZZZZZZZZZZZZZZZ_${'a'.repeat(44)}`]) {
        const reply = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token, sourceIp: randomIp() });
        expectRestProblem(reply, 'AUTHENTICATION_REQUIRED');
        expect(reply.headers['www-authenticate']).toMatch(/^Bearer/);
      }
      const revoked = await seedToken(runtime.store, clock, { teamId: world.a.team.id, abilities: ['team:view'] });
      await rest(runtime, { method: 'DELETE', path: `/v1/tokens/${revoked.id}`, token: world.a.token });
      expectRestProblem(
        await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: revoked.token, sourceIp: randomIp() }),
        'AUTHENTICATION_REQUIRED',
      );
    },
    mcpHttp: async () =>
      expectHttpProblem(
        await mcpPost(runtime, toolsCall(1, 'get_team'), { clientIp: randomIp() }),
        'AUTHENTICATION_REQUIRED',
      ),
    notOn: 'tool results: a tool runs only for an authenticated principal; the tool server answers 401 at HTTP level.',
  },
  TOKEN_MISSING_ABILITY: {
    rest: async () =>
      expectRestProblem(
        await rest(runtime, { method: 'GET', path: '/v1/projects', token: world.a.weak.token }),
        'TOKEN_MISSING_ABILITY',
      ),
    tool: async () =>
      expectToolProblem(await tool(runtime, world.a.weak.principal, 'list_projects'), 'TOKEN_MISSING_ABILITY'),
    mcpHttp: async () => {
      const noGate = await seedToken(runtime.store, clock, { teamId: world.a.team.id, abilities: ['team:view'] });
      expectHttpProblem(
        await mcpPost(runtime, toolsCall(1, 'get_team'), { token: noGate.token }),
        'TOKEN_MISSING_ABILITY',
      );
    },
  },
  RATE_LIMITED: {
    rest: async () => {
      const limited = await seedToken(runtime.store, clock, { teamId: world.a.team.id, abilities: ['team:view'] });
      await consumeRateLimit(runtime.store, clock, 'rest', limited.id, 600); // the whole minute's 600 in one step
      const reply = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: limited.token });
      expectRestProblem(reply, 'RATE_LIMITED');
      expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    },
    mcpHttp: async () => {
      const limited = await seedToken(runtime.store, clock, {
        teamId: world.a.team.id,
        abilities: ['mcp:full', 'team:view'],
      });
      await consumeRateLimit(runtime.store, clock, 'mcp', limited.id, 120); // the whole minute's 120 in one step
      const reply = await mcpPost(runtime, toolsCall(1, 'get_team'), { token: limited.token });
      expectHttpProblem(reply, 'RATE_LIMITED');
      expect(Number(reply.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    },
    notOn: 'tool results: the limit is applied per HTTP request, before any tool runs.',
  },
  VALIDATION_FAILED: {
    rest: async () => {
      const problem = expectRestProblem(
        await rest(runtime, {
          method: 'POST',
          path: '/v1/projects',
          token: world.a.token,
          body: { name: 'x', platform_type: 'discord', color: 'red' },
        }),
        'VALIDATION_FAILED',
      );
      expect(problem.errors).toEqual([expect.objectContaining({ path: 'body' })]);
    },
    tool: async () => {
      const problem = expectToolProblem(
        await tool(runtime, world.a.principal, 'create_project', { name: 42 }),
        'VALIDATION_FAILED',
      );
      expect(problem.errors?.map((error) => error.path).sort()).toEqual(['arguments.name', 'arguments.platform_type']);
    },
  },
  NOT_FOUND: {
    rest: async () => {
      expectRestProblem(
        await rest(runtime, { method: 'GET', path: '/v1/nothing-here', token: world.a.token }),
        'NOT_FOUND',
      );
      expectRestProblem(
        await rest(runtime, { method: 'GET', path: `/v1/projects/${randomUUID()}`, token: world.a.token }),
        'NOT_FOUND',
      );
    },
    tool: async () =>
      expectToolProblem(
        await tool(runtime, world.a.principal, 'get_project', { project_id: randomUUID() }),
        'NOT_FOUND',
      ),
  },
  METHOD_NOT_ALLOWED: {
    rest: async () => {
      const reply = await rest(runtime, { method: 'PUT', path: '/v1/projects', token: world.a.token, body: {} });
      expectRestProblem(reply, 'METHOD_NOT_ALLOWED');
      expect(reply.headers.allow?.split(', ').sort()).toEqual(['GET', 'POST']);
    },
    notOn:
      'tools: a tool call has no HTTP method; the tool server answers GET with a plain 405 as the MCP transport specifies.',
  },
  UNSUPPORTED_MEDIA_TYPE: {
    rest: async () =>
      expectRestProblem(
        await rest(runtime, {
          method: 'POST',
          path: '/v1/projects',
          token: world.a.token,
          body: 'name=x',
          headers: { 'Content-Type': 'text/plain' },
        }),
        'UNSUPPORTED_MEDIA_TYPE',
      ),
    notOn: 'tools: arguments arrive inside JSON-RPC; the transport itself enforces its content type.',
  },
  PAYLOAD_TOO_LARGE: {
    rest: async () => {
      const body = JSON.stringify({ name: 'x', platform_type: 'discord', description: 'y'.repeat(MAX_BODY_BYTES) });
      expectRestProblem(
        await rest(runtime, {
          method: 'POST',
          path: '/v1/projects',
          token: world.a.token,
          body,
          headers: { 'Content-Type': 'application/json' },
        }),
        'PAYLOAD_TOO_LARGE',
      );
    },
    notOn:
      'tools: the tool server’s transport caps the JSON-RPC body itself (1 MiB); a tool argument is bounded by its schema (VALIDATION_FAILED).',
  },
  IDEMPOTENCY_KEY_REUSED: {
    rest: async () => {
      const key = randomUUID();
      await rest(runtime, {
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        headers: { 'Idempotency-Key': key },
        body: { name: 'one', platform_type: 'discord' },
      });
      expectRestProblem(
        await rest(runtime, {
          method: 'POST',
          path: '/v1/projects',
          token: world.a.token,
          headers: { 'Idempotency-Key': key },
          body: { name: 'two', platform_type: 'discord' },
        }),
        'IDEMPOTENCY_KEY_REUSED',
      );
    },
    tool: async () => {
      const key = randomUUID();
      await tool(runtime, world.a.principal, 'create_project', {
        name: 'one',
        platform_type: 'discord',
        idempotency_key: key,
      });
      expectToolProblem(
        await tool(runtime, world.a.principal, 'create_project', {
          name: 'two',
          platform_type: 'discord',
          idempotency_key: key,
        }),
        'IDEMPOTENCY_KEY_REUSED',
      );
    },
  },
  IDEMPOTENCY_KEY_IN_USE: {
    rest: async () => {
      const key = randomUUID();
      const call = {
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        headers: { 'Idempotency-Key': key },
        body: { name: 'slow', platform_type: 'discord' },
      };
      const gate = gatedStore(runtime.store, (command) => command.constructor.name === 'TransactWriteCommand');
      const first = rest(withStore(runtime, gate.store), call);
      await gate.reached;
      expectRestProblem(await rest(runtime, call), 'IDEMPOTENCY_KEY_IN_USE');
      gate.release();
      await first;
    },
    tool: async () => {
      const args = { name: 'slow tool', platform_type: 'discord', idempotency_key: randomUUID() };
      const gate = gatedStore(runtime.store, (command) => command.constructor.name === 'TransactWriteCommand');
      const first = tool(withStore(runtime, gate.store), world.a.principal, 'create_project', args);
      await gate.reached;
      expectToolProblem(await tool(runtime, world.a.principal, 'create_project', args), 'IDEMPOTENCY_KEY_IN_USE');
      gate.release();
      await first;
    },
  },
  CONFLICT: {
    // Only a dead delivery can be retried; the seeded test delivery is pending.
    rest: async () =>
      expectRestProblem(
        await rest(runtime, {
          method: 'POST',
          path: `/v1/webhook-deliveries/${world.a.deliveryId}/retry`,
          token: world.a.token,
        }),
        'CONFLICT',
      ),
    tool: async () =>
      expectToolProblem(
        await tool(runtime, world.a.principal, 'retry_webhook_delivery', { id: world.a.deliveryId }),
        'CONFLICT',
      ),
  },
  BILLING_LOCKED: {
    // A team locked for non-payment (D20): a creator write is refused; the same write of team A passes.
    rest: async () => {
      const locked = await seedTeam(runtime.store, clock, undefined, 'free');
      await lockTeam(runtime, locked.team.id);
      expectRestProblem(
        await rest(runtime, {
          method: 'POST',
          path: '/v1/projects',
          token: locked.token,
          body: { name: 'blocked', platform_type: 'discord' },
        }),
        'BILLING_LOCKED',
      );
    },
    tool: async () => {
      const locked = await seedTeam(runtime.store, clock, undefined, 'free');
      await lockTeam(runtime, locked.team.id);
      expectToolProblem(
        await tool(runtime, locked.principal, 'create_project', { name: 'blocked', platform_type: 'discord' }),
        'BILLING_LOCKED',
      );
    },
  },
  TIER_LIMIT_REACHED: {
    // A free team (D20: 3 projects) asking for a fourth.
    rest: async () => {
      const free = await seedTeam(runtime.store, clock, undefined, 'free');
      for (let index = 0; index < TIER_LIMITS.free.projects; index++)
        await createProject(runtime, free.principal, { name: `p${index}`, platform_type: 'discord' });
      expectRestProblem(
        await rest(runtime, {
          method: 'POST',
          path: '/v1/projects',
          token: free.token,
          body: { name: 'one too many', platform_type: 'discord' },
        }),
        'TIER_LIMIT_REACHED',
      );
    },
    tool: async () => {
      const free = await seedTeam(runtime.store, clock, undefined, 'free');
      for (let index = 0; index < TIER_LIMITS.free.projects; index++)
        await createProject(runtime, free.principal, { name: `p${index}`, platform_type: 'discord' });
      expectToolProblem(
        await tool(runtime, free.principal, 'create_project', { name: 'one too many', platform_type: 'discord' }),
        'TIER_LIMIT_REACHED',
      );
    },
  },
  CSRF_TOKEN_INVALID: {
    // A signed-in dashboard POST without the session's CSRF token is refused before anything runs.
    dashboard: async () => {
      const owner = await ensureTeamOwner(runtime, world.a.team.id, {
        email: `owner-${randomUUID()}@example.com`,
        name: 'Owner',
      });
      const { cookieValue } = await createSession(runtime.store, clock, {
        teamId: world.a.team.id,
        memberId: owner.id,
        state: 'active',
        method: 'passkey',
      });
      const reply = await handleDashboardRequest(runtime, {
        version: '2.0',
        routeKey: '$default',
        rawPath: '/dashboard/tokens',
        rawQueryString: '',
        cookies: [`dashboard_session=${cookieValue}`],
        headers: { host: 'localhost', 'content-type': 'application/x-www-form-urlencoded' },
        requestContext: { http: { method: 'POST', path: '/dashboard/tokens' }, requestId: randomUUID() },
        body: 'name=forged&preset=full',
        isBase64Encoded: false,
      } as never);
      expect(reply.statusCode).toBe(403);
      expectProblem(JSON.parse(reply.body), 'CSRF_TOKEN_INVALID');
    },
    notOn:
      'REST and tools: only the dashboard has sessions and forms; bearer-token surfaces never read cookies (DESIGN D21).',
  },
  PROVIDER_UNAVAILABLE: {
    // Telegram cannot be reached while a bot is being connected (a closed loopback port, no retries).
    rest: async () => {
      const offline: TestRuntime = {
        ...runtime,
        integrations: {
          keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
          telegramApiRoot: 'http://127.0.0.1:9',
          stripeApiBaseUrl: 'http://127.0.0.1:9',
          publicBaseUrl: 'https://service.example',
          retry: { retries: 0, minTimeoutMs: 0 },
        },
      };
      const before = await domainSnapshot(runtime.store);
      const reply = await rest(offline, {
        method: 'PUT',
        path: `/v1/projects/${world.a.otherProject.id}/bot`,
        token: world.a.token,
        body: { token: '123456:AAEsecret-token-part-0123456789' },
      });
      const problem = expectRestProblem(reply, 'PROVIDER_UNAVAILABLE');
      expect(problem.detail).toContain('getMe');
      expect(reply.text).not.toContain('AAEsecret');
      expect(await domainSnapshot(runtime.store)).toEqual(before);
    },
    notOn: 'tool: connecting a bot is a REST operation only (a bot token never passes through an agent).',
  },
  INTERNAL_ERROR: {
    // An injected infrastructure fault: the store fails every Query (the project list reads with one).
    rest: async () => {
      const broken = withStore(
        runtime,
        failingStore(runtime.store, (command) => command.constructor.name === 'QueryCommand'),
      );
      const reply = await rest(broken, { method: 'GET', path: '/v1/projects', token: world.a.token });
      const problem = expectRestProblem(reply, 'INTERNAL_ERROR');
      expect(reply.text).not.toContain('injected store failure');
      expect(problem.detail).not.toContain('secret');
    },
    tool: async () => {
      const broken = withStore(
        runtime,
        failingStore(runtime.store, (command) => command.constructor.name === 'QueryCommand'),
      );
      const result = await tool(broken, world.a.principal, 'list_projects');
      expectToolProblem(result, 'INTERNAL_ERROR');
      expect(JSON.stringify(result)).not.toContain('injected store failure');
    },
  },
};

describe('the error-code catalogue walk', () => {
  it('has a trigger for every code of the catalogue, and explains every surface it skips', () => {
    expect(Object.keys(TRIGGERS).sort()).toEqual(ERROR_CODES.map((entry) => entry.code).sort());
    for (const [code, trigger] of Object.entries(TRIGGERS)) {
      const surfaces = [trigger.rest, trigger.tool, trigger.mcpHttp, trigger.dashboard].filter(Boolean).length;
      expect(surfaces, code).toBeGreaterThan(0);
      if (!trigger.tool) expect(trigger.notOn, `${code} needs a reason why tools cannot produce it`).toMatch(/tool/i);
    }
  });

  for (const entry of ERROR_CODES) {
    const trigger = TRIGGERS[entry.code];
    if (trigger.rest) it(`${entry.code} (${entry.status}) on REST`, trigger.rest);
    if (trigger.tool) it(`${entry.code} (${entry.status}) as a tool result`, trigger.tool);
    if (trigger.mcpHttp) it(`${entry.code} (${entry.status}) on the tool server’s HTTP edge`, trigger.mcpHttp);
    if (trigger.dashboard) it(`${entry.code} (${entry.status}) on the dashboard`, trigger.dashboard);
  }
});
