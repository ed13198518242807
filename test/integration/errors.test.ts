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
import { beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, type ErrorCode } from '../../shared/catalogues/error-codes.js';
import type { ManualClock } from '../../shared/clock.js';
import { consumeRateLimit } from '../../shared/limits/rate-limit.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { MAX_BODY_BYTES } from '../../shared/http/rest-handler.js';
import {
  createWorld,
  domainSnapshot,
  expectProblem,
  expectRestProblem,
  expectToolProblem,
  failingStore,
  gatedStore,
  withStore,
  type World,
} from '../support/guarantees.js';
import { mcpPost, mcpSession, rest, tool, toolsCall, type McpReply, type RestReply } from '../support/calls.js';
import { createTestRuntime, seedTeam, seedToken, testClock, type TestRuntime } from '../support/store.js';
import { lockTeam } from '../support/billing.js';
import { TIER_LIMITS } from '../../shared/domain/billing/schema.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { createSession } from '../../shared/dashboard/sessions.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';

let clock: ManualClock;
let runtime: TestRuntime;
let world: World;

beforeAll(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  world = await createWorld(runtime, clock);
});

/** Asserts a tool-server HTTP answer is a problem document with `code` (D1 on the MCP edge). */
function expectHttpProblem(reply: McpReply, code: ErrorCode) {
  expect(reply.headers.get('content-type')).toContain('application/problem+json');
  const problem = expectProblem(reply.json, code);
  expect(reply.status).toBe(problem.status);
  expect(problem.request_id).toBe(reply.headers.get('x-request-id'));
}

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

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

/**
 * Asserts field-level errors: every error's `path` is one of `expected` (or lies under one, e.g.
 * `body.events.0` under `body.events`), and every expected path has at least one error.
 */
function expectFieldErrors(errors: { path: string; message: string }[] | undefined, expected: readonly string[]): void {
  expect(errors?.length, 'field-level errors').toBeGreaterThan(0);
  const under = (path: string, parent: string) => path === parent || path.startsWith(`${parent}.`);
  for (const error of errors!)
    expect(
      expected.some((parent) => under(error.path, parent)),
      `unexpected error path ${error.path}`,
    ).toBe(true);
  for (const parent of expected)
    expect(
      errors!.some((error) => under(error.path, parent)),
      `no error at ${parent}: ${JSON.stringify(errors)}`,
    ).toBe(true);
  for (const error of errors!) expect(error.message.length).toBeGreaterThan(0);
}

let ipCounter = 0;
function randomIp(): string {
  ipCounter++;
  return `10.${(ipCounter >> 16) & 255}.${(ipCounter >> 8) & 255}.${ipCounter & 255}`;
}

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

describe('bad REST input never gives a 500, and never writes', () => {
  const json = { 'Content-Type': 'application/json' };
  /** [what, call, expected code, expected field paths (VALIDATION_FAILED)] */
  type Case = [string, () => Parameters<typeof rest>[1], ErrorCode, string[]?];
  const cases: Case[] = [
    [
      'malformed JSON',
      () => ({ method: 'POST', path: '/v1/projects', token: world.a.token, body: '{"name": "x",', headers: json }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'JSON with a trailing comma',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: '{"name":"x","platform_type":"discord",}',
        headers: json,
      }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'a text/plain body',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: '{"name":"x"}',
        headers: { 'Content-Type': 'text/plain' },
      }),
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a body without content type',
      () => ({ method: 'POST', path: '/v1/projects', token: world.a.token, body: '{"name":"x"}' }),
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a multipart body',
      () => ({
        method: 'POST',
        path: '/v1/tokens',
        token: world.a.token,
        body: '--x\r\n',
        headers: { 'Content-Type': 'multipart/form-data; boundary=x' },
      }),
      'UNSUPPORTED_MEDIA_TYPE',
    ],
    [
      'a body one byte over 256 KiB',
      () => ({
        method: 'POST',
        path: '/v1/tokens',
        token: world.a.token,
        body: ' '.repeat(MAX_BODY_BYTES + 1),
        headers: json,
      }),
      'PAYLOAD_TOO_LARGE',
    ],
    [
      'a null body',
      () => ({ method: 'POST', path: '/v1/projects', token: world.a.token, body: 'null', headers: json }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'an array body',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: [{ name: 'x', platform_type: 'discord' }],
      }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'a string body',
      () => ({ method: 'POST', path: '/v1/webhook-endpoints', token: world.a.token, body: '"hello"', headers: json }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'a number body',
      () => ({
        method: 'POST',
        path: '/v1/webhook-deliveries/replay-dead',
        token: world.a.token,
        body: '24',
        headers: json,
      }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'an empty body where one is required',
      () => ({ method: 'POST', path: '/v1/projects', token: world.a.token }),
      'VALIDATION_FAILED',
      ['body.name', 'body.platform_type'],
    ],
    [
      'an unknown field',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: { name: 'x', platform_type: 'discord', owner: 'me' },
      }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'a NUL in a project name',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: { name: 'Book\u0000club', platform_type: 'web' },
      }),
      'VALIDATION_FAILED',
      ['body.name'],
    ],
    [
      'an unpaired surrogate in a project name',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: { name: 'Book \ud800 club', platform_type: 'web' },
      }),
      'VALIDATION_FAILED',
      ['body.name'],
    ],
    [
      'an escape character in a description',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: { name: 'Club', description: 'Read \u001b[31mred', platform_type: 'web' },
      }),
      'VALIDATION_FAILED',
      ['body.description'],
    ],
    [
      'a line break in a token name',
      () => ({
        method: 'POST',
        path: '/v1/tokens',
        token: world.a.token,
        body: { name: 'ci\nbot', abilities: ['team:view'] },
      }),
      'VALIDATION_FAILED',
      ['body.name'],
    ],
    [
      'wrong types',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: { name: 7, platform_type: ['discord'] },
      }),
      'VALIDATION_FAILED',
      ['body.name', 'body.platform_type'],
    ],
    [
      'an http:// webhook URL',
      () => ({
        method: 'POST',
        path: '/v1/webhook-endpoints',
        token: world.a.token,
        body: { name: 'x', url: 'http://a.example/h', events: ['project.created'] },
      }),
      'VALIDATION_FAILED',
      ['body.url'],
    ],
    [
      'an unknown event name',
      () => ({
        method: 'POST',
        path: '/v1/webhook-endpoints',
        token: world.a.token,
        body: { name: 'x', url: 'https://a.example/h', events: ['project.exploded'] },
      }),
      'VALIDATION_FAILED',
      ['body.events.0'],
    ],
    [
      'since_hours as a string',
      () => ({
        method: 'POST',
        path: '/v1/webhook-deliveries/replay-dead',
        token: world.a.token,
        body: { since_hours: '24' },
      }),
      'VALIDATION_FAILED',
      ['body.since_hours'],
    ],
    [
      'an unknown ability to mint',
      () => ({ method: 'POST', path: '/v1/tokens', token: world.a.token, body: { abilities: ['root:everything'] } }),
      'VALIDATION_FAILED',
      ['body.abilities.0'],
    ],
    [
      'a body on a DELETE',
      () => ({
        method: 'DELETE',
        path: `/v1/webhook-endpoints/${world.a.endpoint.id}`,
        token: world.a.token,
        body: { force: true },
      }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'a body on a body-less POST',
      () => ({
        method: 'POST',
        path: `/v1/webhook-endpoints/${world.a.endpoint.id}/rotate-secret`,
        token: world.a.token,
        body: { secret: 'mine' },
      }),
      'VALIDATION_FAILED',
      ['body'],
    ],
    [
      'an unknown query parameter',
      () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { sort: 'name' } }),
      'VALIDATION_FAILED',
      ['query'],
    ],
    [
      'a query on a route without one',
      () => ({ method: 'GET', path: '/v1/teams/current', token: world.a.token, query: { expand: 'all' } }),
      'VALIDATION_FAILED',
      ['query.expand'],
    ],
    [
      'limit 1000',
      () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { limit: '1000' } }),
      'VALIDATION_FAILED',
      ['query.limit'],
    ],
    [
      'limit 0',
      () => ({ method: 'GET', path: '/v1/tokens', token: world.a.token, query: { limit: '0' } }),
      'VALIDATION_FAILED',
      ['query.limit'],
    ],
    [
      'limit -5',
      () => ({ method: 'GET', path: '/v1/activity', token: world.a.token, query: { limit: '-5' } }),
      'VALIDATION_FAILED',
      ['query.limit'],
    ],
    [
      'limit 2.5',
      () => ({ method: 'GET', path: '/v1/webhook-endpoints', token: world.a.token, query: { limit: '2.5' } }),
      'VALIDATION_FAILED',
      ['query.limit'],
    ],
    [
      'limit abc',
      () => ({ method: 'GET', path: '/v1/webhook-deliveries', token: world.a.token, query: { limit: 'abc' } }),
      'VALIDATION_FAILED',
      ['query.limit'],
    ],
    [
      'limit 1e9',
      () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { limit: '1e9' } }),
      'VALIDATION_FAILED',
      ['query.limit'],
    ],
    [
      'a repeated limit',
      () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { limit: '5,6' } }),
      'VALIDATION_FAILED',
      ['query.limit'],
    ],
    [
      'an activity token_id that is not a token id',
      () => ({ method: 'GET', path: '/v1/activity', token: world.a.token, query: { token_id: 'x'.repeat(30) } }),
      'VALIDATION_FAILED',
      ['query.token_id'],
    ],
    [
      'a delivery status outside the enum',
      () => ({ method: 'GET', path: '/v1/webhook-deliveries', token: world.a.token, query: { status: 'exploded' } }),
      'VALIDATION_FAILED',
      ['query.status'],
    ],
    [
      'a project id that is not a UUID',
      () => ({ method: 'GET', path: '/v1/projects/42', token: world.a.token }),
      'VALIDATION_FAILED',
      ['path.project_id'],
    ],
    [
      'a delivery id that is not dlv_+ULID',
      () => ({ method: 'GET', path: '/v1/webhook-deliveries/evt_123', token: world.a.token }),
      'VALIDATION_FAILED',
      ['path.id'],
    ],
    [
      'a token id that is not a ULID',
      () => ({ method: 'DELETE', path: '/v1/tokens/not-a-ulid', token: world.a.token }),
      'VALIDATION_FAILED',
      ['path.id'],
    ],
    [
      'broken percent-encoding in the path',
      () => ({ method: 'GET', path: '/v1/projects/%E0%A4%A', token: world.a.token }),
      'NOT_FOUND',
    ],
    [
      'an encoded slash in an id',
      () => ({ method: 'GET', path: `/v1/projects/${randomUUID()}%2Fx`, token: world.a.token }),
      'VALIDATION_FAILED',
      ['path.project_id'],
    ],
    ['an unknown route', () => ({ method: 'GET', path: '/v2/projects', token: world.a.token }), 'NOT_FOUND'],
    ['a trailing slash', () => ({ method: 'GET', path: '/v1/projects/', token: world.a.token }), 'NOT_FOUND'],
    ['the root', () => ({ method: 'GET', path: '/' }), 'NOT_FOUND'],
    [
      'an unknown method',
      () => ({ method: 'PATCH', path: `/v1/webhook-endpoints/${world.a.endpoint.id}`, token: world.a.token, body: {} }),
      'METHOD_NOT_ALLOWED',
    ],
    ['OPTIONS on REST', () => ({ method: 'OPTIONS', path: '/v1/projects' }), 'METHOD_NOT_ALLOWED'],
    [
      'an Idempotency-Key that is not a UUID',
      () => ({
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        headers: { 'Idempotency-Key': 'again' },
        body: { name: 'x', platform_type: 'discord' },
      }),
      'VALIDATION_FAILED',
      ['header.idempotency-key'],
    ],
    [
      'Basic authentication',
      () => ({
        method: 'GET',
        path: '/v1/projects',
        headers: { Authorization: 'Basic dXNlcjpwYXNz' },
        sourceIp: randomIp(),
      }),
      'AUTHENTICATION_REQUIRED',
    ],
    [
      'a bare Bearer',
      () => ({ method: 'GET', path: '/v1/projects', headers: { Authorization: 'Bearer' }, sourceIp: randomIp() }),
      'AUTHENTICATION_REQUIRED',
    ],
    [
      'a token with the right shape and a wrong secret',
      () => ({ method: 'GET', path: '/v1/projects', token: `${world.a.token.slice(0, -4)}AAAA`, sourceIp: randomIp() }),
      'AUTHENTICATION_REQUIRED',
    ],
  ];

  for (const [what, call, code, paths] of cases) {
    it(`${what} → ${code}`, async () => {
      const before = await domainSnapshot(runtime.store);
      const reply = await rest(runtime, call());
      const problem = expectRestProblem(reply, code);
      if (paths) expectFieldErrors(problem.errors, paths);
      expect(await domainSnapshot(runtime.store)).toEqual(before);
    });
  }

  describe('forged, foreign and stale cursors on every list', () => {
    const lists = ['/v1/projects', '/v1/tokens', '/v1/activity', '/v1/webhook-endpoints', '/v1/webhook-deliveries'];
    const cursors: [string, () => string][] = [
      ['not base64 JSON', () => '!!!not-a-cursor'],
      ['JSON null', () => b64('null')],
      ['a JSON string', () => b64('"TEAM"')],
      ['another team’s partition', () => b64({ pk: `TEAM#${world.b.team.id}`, sk: `PROJECT#${world.b.project.id}` })],
      ['the right partition, a sort key outside the list', () => b64({ pk: `TEAM#${world.a.team.id}`, sk: 'ZZZZ' })],
      ['the right partition, no sort key', () => b64({ pk: `TEAM#${world.a.team.id}` })],
      ['a numeric sort key', () => b64({ pk: `TEAM#${world.a.team.id}`, sk: 5 })],
      ['an empty sort key', () => b64({ pk: `TEAM#${world.a.team.id}`, sk: '' })],
      [
        'an extra attribute',
        () => b64({ pk: `TEAM#${world.a.team.id}`, sk: `PROJECT#${world.a.project.id}`, evil: true }),
      ],
      ['the activity partition', () => b64({ pk: `TEAM#${world.a.team.id}#ACTIVITY`, sk: 'act_X' })],
      [
        'the tokens index',
        () => b64({ gsi1pk: `TEAM#${world.a.team.id}#TOKENS`, gsi1sk: '0', pk: 'TOKEN#0', sk: 'X' }),
      ],
    ];
    for (const path of lists) {
      it(`${path}: every bad cursor is VALIDATION_FAILED on query.cursor`, async () => {
        for (const [what, cursor] of cursors) {
          const reply = await rest(runtime, { method: 'GET', path, token: world.a.token, query: { cursor: cursor() } });
          if (reply.status === 200) {
            // A well-formed cursor of this very list is simply a position in it: it may only show team A's data.
            expect(reply.text, what).not.toContain(world.b.team.id);
            continue;
          }
          const problem = expectRestProblem(reply, 'VALIDATION_FAILED');
          expect(problem.errors, `${path} ${what}`).toEqual([{ path: 'query.cursor', message: expect.any(String) }]);
        }
      });
    }
    it('the same on list tools', async () => {
      for (const name of [
        'list_projects',
        'list_tokens',
        'get_activity_log',
        'list_webhook_endpoints',
        'list_webhook_deliveries',
      ]) {
        for (const [what, cursor] of cursors) {
          const result = await tool(runtime, world.a.principal, name, { cursor: cursor() });
          if (!result.isError) {
            expect(JSON.stringify(result), what).not.toContain(world.b.team.id);
            continue;
          }
          expectToolProblem(result, 'VALIDATION_FAILED');
        }
      }
    });
  });
});

describe('bad tool arguments never give an internal error', () => {
  const cases: [string, string, unknown, string[]][] = [
    ['arguments that are an array', 'list_projects', [1, 2], ['arguments']],
    ['arguments that are a string', 'get_project', 'x', ['arguments']],
    ['an unknown argument', 'list_projects', { sort: 'name' }, ['arguments']],
    ['a wrong type', 'get_project', { project_id: 42 }, ['arguments.project_id']],
    ['limit 1000', 'list_tokens', { limit: 1000 }, ['arguments.limit']],
    ['limit as a string', 'list_webhook_endpoints', { limit: '10' }, ['arguments.limit']],
    [
      'a non-UUID idempotency_key',
      'create_webhook_endpoint',
      { name: 'x', url: 'https://a.example/h', events: ['project.created'], idempotency_key: 'k' },
      ['arguments.idempotency_key'],
    ],
    [
      'an http:// URL',
      'create_webhook_endpoint',
      { name: 'x', url: 'http://a.example/h', events: ['project.created'] },
      ['arguments.url'],
    ],
    ['since_hours 0', 'replay_dead_webhook_deliveries', { since_hours: 0 }, ['arguments.since_hours']],
  ];
  for (const [what, name, args, paths] of cases) {
    it(`${name} with ${what}`, async () => {
      const before = await domainSnapshot(runtime.store);
      const problem = expectToolProblem(await tool(runtime, world.a.principal, name, args), 'VALIDATION_FAILED');
      expectFieldErrors(problem.errors, paths);
      expect(await domainSnapshot(runtime.store)).toEqual(before);
    });
  }

  it('answers an unknown tool with a JSON-RPC error on the tool server (MCP), and logs it', async () => {
    const sessionId = await mcpSession(runtime, world.a.token);
    const reply = await mcpPost(runtime, toolsCall(7, 'drop_tables', {}), { token: world.a.token, sessionId });
    expect(reply.status).toBe(200);
    expect(reply.json.error).toMatchObject({ code: -32602 });
  });
});

describe('problem documents on REST', () => {
  it('carry the same request id in the body and the X-Request-Id header, on successes too', async () => {
    const ok: RestReply = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: world.a.token });
    expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const failed = await rest(runtime, { method: 'GET', path: `/v1/projects/${randomUUID()}`, token: world.a.token });
    expect(failed.json.request_id).toBe(failed.headers['x-request-id']);
  });
});
