/**
 * Tenant isolation (interface "Bearer tokens" 4–5, DESIGN D2), proved by walking EVERY REST route of
 * the route table and EVERY tool of the tool table (a case is required for each: a new route or tool
 * without one fails this file):
 *
 * - as team A's full token, aimed at team B's ids: every id-addressed operation is NOT_FOUND, every
 *   list holds only team A's objects, writes land in team A; nothing team A receives contains any id,
 *   name or secret of team B, and team B's partition and tokens are unchanged afterwards;
 * - as a token of team A narrowed to one project (`scope:project:<uuid>`): that project is visible,
 *   team A's other project is NOT_FOUND and never appears (not in lists, not in cursors); operations
 *   over team-wide data (tokens, activity, webhooks, members, roles, groups) are TOKEN_MISSING_ABILITY,
 *   whatever ids are sent (decided before any read, so nothing about existence leaks); the token mints
 *   only within its own project.
 *
 * Tools published ahead of their domain answer NOT_IMPLEMENTED whatever their arguments, which is
 * isolation by construction; they are walked too so that implementing one without isolation fails here.
 */
import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { OPERATIONS as ROUTES, type OperationId, type RegisteredOperation as RouteDefinition } from '../../shared/operations/registry.js';
import { TOOL_TABLE } from '../../shared/mcp/tools.js';
import type { ToolName } from '../../shared/catalogues/tools.js';
import type { ErrorCode } from '../../shared/catalogues/error-codes.js';
import {
  createWorld,
  expectNoneOf,
  expectProblem,
  rest,
  teamPartitionSnapshot,
  tool,
  type RestCall,
  type World,
} from '../support/guarantees.js';
import { createTestRuntime, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let world: World;
let bBefore: string[];

beforeAll(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  world = await createWorld(runtime, clock);
  bBefore = await teamPartitionSnapshot(runtime.store, world.b.team.id);
});

/** What a case expects: a code, or success checked by `ok` (status and body). */
type Expect = { code: ErrorCode } | { ok: (body: any, status: number) => void };

interface RouteCase {
  call: (w: World) => Omit<RestCall, 'method' | 'path' | 'token'> & { path: string };
  expect: Expect;
}

const idsOf = (body: { data: { id: string }[] }) => body.data.map((item) => item.id);
const newEndpoint = { name: 'A hook', url: 'https://a.example/hooks', events: ['project.created'] };

/** Team A's full token, aimed at team B's objects: one case per REST route. */
const FOREIGN_ROUTE_CASES: Record<OperationId, RouteCase> = {
  getCurrentTeam: { call: () => ({ path: '/v1/teams/current' }), expect: { ok: (body) => expect(body.id).toBe(world.a.team.id) } },
  listActivity: { call: (w) => ({ path: '/v1/activity', query: { token_id: w.b.principal.tokenId } }), expect: { ok: (body) => expect(body.data).toEqual([]) } },
  createProject: { call: () => ({ path: '/v1/projects', body: { name: 'Made by A', platform_type: 'discord' } }), expect: { ok: (_body, status) => expect(status).toBe(201) } },
  listProjects: { call: () => ({ path: '/v1/projects', query: { limit: '100' } }), expect: { ok: (body) => expect(idsOf(body)).not.toContain(world.b.project.id) } },
  getProject: { call: (w) => ({ path: `/v1/projects/${w.b.project.id}` }), expect: { code: 'NOT_FOUND' } },
  createWebhookEndpoint: { call: () => ({ path: '/v1/webhook-endpoints', body: newEndpoint }), expect: { ok: (_body, status) => expect(status).toBe(201) } },
  listWebhookEndpoints: { call: () => ({ path: '/v1/webhook-endpoints' }), expect: { ok: (body) => expect(idsOf(body)).toContain(world.a.endpoint.id) } },
  getWebhookEndpoint: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.b.endpoint.id}` }), expect: { code: 'NOT_FOUND' } },
  updateWebhookEndpoint: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.b.endpoint.id}`, body: { is_active: false } }), expect: { code: 'NOT_FOUND' } },
  deleteWebhookEndpoint: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.b.endpoint.id}` }), expect: { code: 'NOT_FOUND' } },
  rotateWebhookEndpointSecret: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.b.endpoint.id}/rotate-secret` }), expect: { code: 'NOT_FOUND' } },
  sendTestWebhookEvent: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.b.endpoint.id}/test` }), expect: { code: 'NOT_FOUND' } },
  listWebhookDeliveries: { call: (w) => ({ path: '/v1/webhook-deliveries', query: { endpoint_id: w.b.endpoint.id } }), expect: { ok: (body) => expect(body.data).toEqual([]) } },
  getWebhookDelivery: { call: (w) => ({ path: `/v1/webhook-deliveries/${w.b.deliveryId}` }), expect: { code: 'NOT_FOUND' } },
  retryWebhookDelivery: { call: (w) => ({ path: `/v1/webhook-deliveries/${w.b.deliveryId}/retry` }), expect: { code: 'NOT_FOUND' } },
  replayDeadWebhookDeliveries: { call: () => ({ path: '/v1/webhook-deliveries/replay-dead', body: { since_hours: 720 } }), expect: { ok: (body) => expect(body).toEqual({ replayed: 0 }) } },
  createToken: { call: (w) => ({ path: '/v1/tokens', body: { abilities: ['project:view'], project_ids: [w.b.project.id] } }), expect: { code: 'NOT_FOUND' } },
  listTokens: { call: () => ({ path: '/v1/tokens', query: { limit: '100' } }), expect: { ok: (body) => expect(idsOf(body)).toContain(world.a.principal.tokenId) } },
  revokeToken: { call: (w) => ({ path: `/v1/tokens/${w.b.spare.id}` }), expect: { code: 'NOT_FOUND' } },
  getOpenApiDocument: { call: () => ({ path: '/openapi.json' }), expect: { ok: (_body, status) => expect(status).toBe(200) } },
  getWebhookEventsDocument: { call: () => ({ path: '/webhook-events.json' }), expect: { ok: (_body, status) => expect(status).toBe(200) } },
};

const TEAM_WIDE: Expect = { code: 'TOKEN_MISSING_ABILITY' };

/** Team A's token narrowed to `a.project`, aimed at team A's other project: one case per REST route. */
const SCOPED_ROUTE_CASES: Record<OperationId, RouteCase> = {
  getCurrentTeam: { call: () => ({ path: '/v1/teams/current' }), expect: { ok: (body) => expect(body.id).toBe(world.a.team.id) } },
  listActivity: { call: () => ({ path: '/v1/activity' }), expect: TEAM_WIDE },
  createProject: { call: () => ({ path: '/v1/projects', body: { name: 'Scoped', platform_type: 'discord' } }), expect: { code: 'TOKEN_MISSING_ABILITY' } },
  listProjects: { call: () => ({ path: '/v1/projects', query: { limit: '100' } }), expect: { ok: (body) => expect(idsOf(body)).toEqual([world.a.project.id]) } },
  getProject: { call: (w) => ({ path: `/v1/projects/${w.a.otherProject.id}` }), expect: { code: 'NOT_FOUND' } },
  createWebhookEndpoint: { call: () => ({ path: '/v1/webhook-endpoints', body: newEndpoint }), expect: TEAM_WIDE },
  listWebhookEndpoints: { call: () => ({ path: '/v1/webhook-endpoints' }), expect: TEAM_WIDE },
  getWebhookEndpoint: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.a.endpoint.id}` }), expect: TEAM_WIDE },
  updateWebhookEndpoint: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.a.endpoint.id}`, body: { is_active: false } }), expect: TEAM_WIDE },
  deleteWebhookEndpoint: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.a.endpoint.id}` }), expect: TEAM_WIDE },
  rotateWebhookEndpointSecret: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.a.endpoint.id}/rotate-secret` }), expect: TEAM_WIDE },
  sendTestWebhookEvent: { call: (w) => ({ path: `/v1/webhook-endpoints/${w.a.endpoint.id}/test` }), expect: TEAM_WIDE },
  listWebhookDeliveries: { call: () => ({ path: '/v1/webhook-deliveries' }), expect: TEAM_WIDE },
  getWebhookDelivery: { call: (w) => ({ path: `/v1/webhook-deliveries/${w.a.deliveryId}` }), expect: TEAM_WIDE },
  retryWebhookDelivery: { call: (w) => ({ path: `/v1/webhook-deliveries/${w.a.deliveryId}/retry` }), expect: TEAM_WIDE },
  replayDeadWebhookDeliveries: { call: () => ({ path: '/v1/webhook-deliveries/replay-dead', body: { since_hours: 24 } }), expect: TEAM_WIDE },
  createToken: { call: (w) => ({ path: '/v1/tokens', body: { abilities: ['project:view'], project_ids: [w.a.otherProject.id] } }), expect: { code: 'TOKEN_MISSING_ABILITY' } },
  listTokens: { call: () => ({ path: '/v1/tokens' }), expect: TEAM_WIDE },
  revokeToken: { call: (w) => ({ path: `/v1/tokens/${w.a.spare.id}` }), expect: TEAM_WIDE },
  getOpenApiDocument: { call: () => ({ path: '/openapi.json' }), expect: { ok: (_body, status) => expect(status).toBe(200) } },
  getWebhookEventsDocument: { call: () => ({ path: '/webhook-events.json' }), expect: { ok: (_body, status) => expect(status).toBe(200) } },
};

interface ToolCase {
  args: (w: World) => Record<string, unknown>;
  expect: Expect;
}

const NI: Expect = { code: 'NOT_IMPLEMENTED' };
const some = () => randomUUID();

/**
 * Arguments for every tool, aimed at team B (foreign walk) — valid arguments, so that the answer is
 * about isolation and not about validation — and what team A's full token must get.
 */
const FOREIGN_TOOL_CASES: Record<ToolName, ToolCase> = {
  list_projects: { args: () => ({ limit: 100 }), expect: { ok: (body) => expect(idsOf(body)).not.toContain(world.b.project.id) } },
  get_project: { args: (w) => ({ project_id: w.b.project.id }), expect: { code: 'NOT_FOUND' } },
  create_project: { args: () => ({ name: 'Tool project of A', platform_type: 'discord' }), expect: { ok: (body) => expect(body.name).toBe('Tool project of A') } },
  update_project: { args: (w) => ({ project_id: w.b.project.id, name: 'Hijacked' }), expect: NI },
  get_team: { args: () => ({}), expect: { ok: (body) => expect(body.id).toBe(world.a.team.id) } },
  list_team_members: { args: () => ({}), expect: NI },
  list_subscribers: { args: (w) => ({ project_id: w.b.project.id }), expect: NI },
  get_subscriber: { args: () => ({ id: some() }), expect: NI },
  ban_subscriber: { args: () => ({ id: some() }), expect: NI },
  kick_subscriber: { args: () => ({ id: some() }), expect: NI },
  list_plans: { args: (w) => ({ project_id: w.b.project.id }), expect: NI },
  get_plan: { args: () => ({ id: some() }), expect: NI },
  create_plan: { args: (w) => ({ project_id: w.b.project.id, name: 'Gold', amount: 500, currency: 'USD', interval: 'month' }), expect: NI },
  update_plan: { args: () => ({ id: some(), name: 'Silver' }), expect: NI },
  list_subscriptions: { args: (w) => ({ project_id: w.b.project.id }), expect: NI },
  get_subscription: { args: () => ({ id: some() }), expect: NI },
  cancel_subscription: { args: () => ({ id: some() }), expect: NI },
  pause_subscription: { args: () => ({ id: some() }), expect: NI },
  resume_subscription: { args: () => ({ id: some() }), expect: NI },
  list_access_codes: { args: (w) => ({ project_id: w.b.project.id }), expect: NI },
  generate_access_codes: { args: (w) => ({ project_id: w.b.project.id, plan_id: some(), count: 1 }), expect: NI },
  revoke_access_code: { args: () => ({ id: some() }), expect: NI },
  list_payments: { args: (w) => ({ project_id: w.b.project.id }), expect: NI },
  get_payment: { args: () => ({ id: some() }), expect: NI },
  refund_payment: { args: () => ({ id: some() }), expect: NI },
  list_roles: { args: () => ({}), expect: NI },
  get_role: { args: () => ({ id: some() }), expect: NI },
  list_groups: { args: () => ({}), expect: NI },
  get_group: { args: () => ({ id: some() }), expect: NI },
  list_tokens: { args: () => ({ limit: 100, include_revoked: true }), expect: { ok: (body) => expect(idsOf(body)).toContain(world.a.principal.tokenId) } },
  get_activity_log: { args: (w) => ({ token_id: w.b.principal.tokenId }), expect: { ok: (body) => expect(body.data).toEqual([]) } },
  list_webhook_endpoints: { args: () => ({}), expect: { ok: (body) => expect(idsOf(body)).toContain(world.a.endpoint.id) } },
  get_webhook_endpoint: { args: (w) => ({ id: w.b.endpoint.id }), expect: { code: 'NOT_FOUND' } },
  create_webhook_endpoint: { args: () => newEndpoint, expect: { ok: (body) => expect(body.secret).toMatch(/^whsec_/) } },
  update_webhook_endpoint: { args: (w) => ({ id: w.b.endpoint.id, url: 'https://attacker.example/steal' }), expect: { code: 'NOT_FOUND' } },
  delete_webhook_endpoint: { args: (w) => ({ id: w.b.endpoint.id }), expect: { code: 'NOT_FOUND' } },
  rotate_webhook_endpoint_secret: { args: (w) => ({ id: w.b.endpoint.id }), expect: { code: 'NOT_FOUND' } },
  send_test_webhook_event: { args: (w) => ({ id: w.b.endpoint.id }), expect: { code: 'NOT_FOUND' } },
  list_webhook_deliveries: { args: (w) => ({ endpoint_id: w.b.endpoint.id }), expect: { ok: (body) => expect(body.data).toEqual([]) } },
  get_webhook_delivery: { args: (w) => ({ id: w.b.deliveryId }), expect: { code: 'NOT_FOUND' } },
  retry_webhook_delivery: { args: (w) => ({ id: w.b.deliveryId }), expect: { code: 'NOT_FOUND' } },
  replay_dead_webhook_deliveries: { args: () => ({ since_hours: 720 }), expect: { ok: (body) => expect(body).toEqual({ replayed: 0 }) } },
};

/** The team-wide tools: a project-scoped token gets TOKEN_MISSING_ABILITY for each. */
const TEAM_WIDE_TOOL_NAMES: readonly ToolName[] = [
  'list_team_members', 'list_roles', 'get_role', 'list_groups', 'get_group', 'list_tokens', 'get_activity_log',
  'list_webhook_endpoints', 'get_webhook_endpoint', 'create_webhook_endpoint', 'update_webhook_endpoint', 'delete_webhook_endpoint',
  'rotate_webhook_endpoint_secret', 'send_test_webhook_event', 'list_webhook_deliveries', 'get_webhook_delivery',
  'retry_webhook_delivery', 'replay_dead_webhook_deliveries',
];

/** The project-scoped token's cases: team A's other project instead of team B's objects. */
function scopedToolCase(name: ToolName): ToolCase {
  if (TEAM_WIDE_TOOL_NAMES.includes(name)) return { args: FOREIGN_TOOL_CASES[name].args, expect: TEAM_WIDE };
  const withOtherProject = (w: World) => {
    const args = FOREIGN_TOOL_CASES[name].args(w);
    return 'project_id' in args ? { ...args, project_id: w.a.otherProject.id } : args;
  };
  switch (name) {
    case 'list_projects':
      return { args: () => ({ limit: 100 }), expect: { ok: (body) => expect(idsOf(body)).toEqual([world.a.project.id]) } };
    case 'get_project':
      return { args: withOtherProject, expect: { code: 'NOT_FOUND' } };
    case 'create_project':
      return { args: FOREIGN_TOOL_CASES.create_project.args, expect: { code: 'TOKEN_MISSING_ABILITY' } };
    default:
      return { args: withOtherProject, expect: FOREIGN_TOOL_CASES[name].expect };
  }
}

/** The secrets the caller did not send itself (an error detail may echo the id it was asked about). */
function notSent(secrets: readonly string[], request: unknown): string[] {
  const sent = JSON.stringify(request);
  return secrets.filter((secret) => !sent.includes(secret));
}

function check(expectation: Expect, status: number, body: unknown, what: string): void {
  if ('code' in expectation) {
    expect((body as { code?: string })?.code, `${what}: ${JSON.stringify(body)}`).toBe(expectation.code);
    expectProblem(body, expectation.code);
  } else {
    expect(status, `${what}: ${JSON.stringify(body)}`).toBeLessThan(300);
    expectation.ok(body, status);
  }
}

describe('the case tables cover every route and tool', () => {
  it('has a foreign-team and a project-scope case for every REST route and every tool', () => {
    const operations = (ROUTES).map((route) => route.id).sort();
    expect(Object.keys(FOREIGN_ROUTE_CASES).sort()).toEqual(operations);
    expect(Object.keys(SCOPED_ROUTE_CASES).sort()).toEqual(operations);
    expect(Object.keys(FOREIGN_TOOL_CASES).sort()).toEqual(TOOL_TABLE.map((entry) => entry.name).sort());
    // The team-wide sets of both surfaces are the ones this file expects.
    expect(TOOL_TABLE.filter((entry) => entry.teamWide).map((entry) => entry.name).sort()).toEqual([...TEAM_WIDE_TOOL_NAMES].sort());
    const teamWideRoutes = (ROUTES).filter((route) => route.teamWide).map((route) => route.id);
    expect(teamWideRoutes.sort()).toEqual(Object.entries(SCOPED_ROUTE_CASES).filter(([, c]) => c.expect === TEAM_WIDE).map(([op]) => op).sort());
  });
});

describe('team A’s token against team B, on every REST route', () => {
  for (const route of ROUTES) {
    it(`${route.rest.method} ${route.rest.path} (${route.id})`, async () => {
      const testCase = FOREIGN_ROUTE_CASES[route.id as OperationId];
      const request = testCase.call(world);
      const reply = await rest(runtime, { method: route.rest.method, token: world.a.token, ...request });
      check(testCase.expect, reply.status, reply.json, route.id);
      expectNoneOf(reply.text, notSent(world.bSecrets, request), route.id);
    });
  }
});

describe('team A’s token against team B, on every tool', () => {
  for (const entry of TOOL_TABLE) {
    const name = entry.name;
    it(name, async () => {
      const testCase = FOREIGN_TOOL_CASES[name];
      const args = testCase.args(world);
      const result = await tool(runtime, world.a.principal, name, args);
      check(testCase.expect, result.isError ? (result.structuredContent.status as number) : 200, result.structuredContent, name);
      expectNoneOf(JSON.stringify(result), notSent(world.bSecrets, args), name);
    });
  }
});

describe('a project-scoped token, on every REST route', () => {
  for (const route of ROUTES) {
    it(`${route.rest.method} ${route.rest.path} (${route.id})`, async () => {
      const testCase = SCOPED_ROUTE_CASES[route.id as OperationId];
      const request = testCase.call(world);
      const reply = await rest(runtime, { method: route.rest.method, token: world.a.scoped.token, ...request });
      check(testCase.expect, reply.status, reply.json, route.id);
      if (route.ability) expectNoneOf(reply.text, notSent([world.a.otherProject.id, world.a.otherProject.name, ...world.bSecrets], request), route.id);
    });
  }
});

describe('a project-scoped token, on every tool', () => {
  for (const entry of TOOL_TABLE) {
    const name = entry.name;
    it(name, async () => {
      const testCase = scopedToolCase(name);
      const args = testCase.args(world);
      const result = await tool(runtime, world.a.scoped.principal, name, args);
      check(testCase.expect, result.isError ? (result.structuredContent.status as number) : 200, result.structuredContent, name);
      expectNoneOf(JSON.stringify(result), notSent([world.a.otherProject.id, world.a.otherProject.name, ...world.bSecrets], args), name);
    });
  }
});

describe('what the walks leave behind and what they cannot see', () => {
  it('left team B’s partition and tokens untouched', async () => {
    expect(await teamPartitionSnapshot(runtime.store, world.b.team.id)).toEqual(bBefore);
    for (const bearer of [world.b.token, world.b.spare.token]) {
      const reply = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: bearer });
      expect(reply.status).toBe(200);
      expect(reply.json.id).toBe(world.b.team.id);
    }
  });

  it('never lets a project-scoped token page its way to another project (page length and cursors included)', async () => {
    // Team A has several projects around the scoped one; a page of 1 must still show only it.
    for (let index = 0; index < 3; index++) await rest(runtime, { method: 'POST', path: '/v1/projects', token: world.a.token, body: { name: `Filler ${index}`, platform_type: 'discord' } });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await rest(runtime, { method: 'GET', path: '/v1/projects', token: world.a.scoped.token, query: cursor ? { limit: '1', cursor } : { limit: '1' } });
      expect(reply.status).toBe(200);
      seen.push(...idsOf(reply.json));
      cursor = reply.json.next_cursor ?? undefined;
      if (cursor) expect(Buffer.from(cursor, 'base64url').toString()).toContain(world.a.project.id);
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual([world.a.project.id]);
    expect(pages).toBe(1);
    // A team-wide cursor (which names other projects) cannot be replayed by the scoped token to see them.
    const teamPage = await rest(runtime, { method: 'GET', path: '/v1/projects', token: world.a.token, query: { limit: '1' } });
    const replayed = await rest(runtime, { method: 'GET', path: '/v1/projects', token: world.a.scoped.token, query: { limit: '100', cursor: teamPage.json.next_cursor } });
    expect(replayed.status).toBe(200);
    expect(idsOf(replayed.json).every((id) => id === world.a.project.id)).toBe(true);
  });

  it('rejects another team’s cursor as invalid instead of reading with it', async () => {
    const bPage = await rest(runtime, { method: 'GET', path: '/v1/tokens', token: world.b.token, query: { limit: '1' } });
    expect(bPage.json.next_cursor).toEqual(expect.any(String));
    const reply = await rest(runtime, { method: 'GET', path: '/v1/tokens', token: world.a.token, query: { cursor: bPage.json.next_cursor } });
    expect(reply.status).toBe(422);
    expectNoneOf(reply.text, world.bSecrets, 'foreign cursor');
  });

  it('resolves the team from the token only: a team id in the request changes nothing', async () => {
    const reply = await rest(runtime, { method: 'POST', path: '/v1/projects', token: world.a.token, body: { name: 'Smuggled', platform_type: 'discord', team_id: world.b.team.id } });
    expectProblem(reply.json, 'VALIDATION_FAILED');
    const listed = await rest(runtime, { method: 'GET', path: '/v1/projects', token: world.a.token, query: { team_id: world.b.team.id } });
    expectProblem(listed.json, 'VALIDATION_FAILED');
    expect(await teamPartitionSnapshot(runtime.store, world.b.team.id)).toEqual(bBefore);
  });
});
