/**
 * Property tests with fast-check against DynamoDB Local (DESIGN D1–D4): random methods, paths, path
 * parameters, query strings, headers, bodies, tokens and client IPs sent to EVERY REST route, and random
 * tool names, arguments and principals sent to EVERY tool (and, at the HTTP edge of the tool server,
 * random JSON-RPC bodies and headers). For every request:
 *
 * - the answer is never a 500 (and never INTERNAL_ERROR), and a failure is a problem document whose
 *   code is in the catalogue, with the catalogue's status;
 * - a request that fails (authentication, authorization, rate limit, validation, not found, ...) writes
 *   nothing: the domain state of both tables is identical before and after — only the bookkeeping every
 *   request may write (its activity entry, its rate counter) is left out of the comparison;
 * - no promise is left rejected and unhandled.
 *
 * The generators mix valid values (real ids of both teams, real tokens, well-formed bodies) with junk, so
 * runs reach the operations themselves, not only the validators.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import { TOOL_NAMES } from '../../shared/catalogues/tools.js';
import type { ManualClock } from '../../shared/clock.js';
import { type Principal } from '../../shared/auth/principal.js';
import { OPERATIONS as ROUTES, type RegisteredOperation as RouteDefinition } from '../../shared/operations/registry.js';
import { handleMcpHttpRequest } from '../../shared/mcp/http-handler.js';
import { callTool, TOOL_TABLE } from '../../shared/mcp/tools.js';
import { createWorld, domainSnapshot, expectProblem, principalOf, type World } from '../support/guarantees.js';
import { mcpSession, rest } from '../support/calls.js';
import { createTestRuntime, seedToken, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let world: World;
let revokedToken: string;
let victimTokenIds: string[];
let sessionId: string;
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);
/**
 * The domain state as a failed request left it, checked equal to the state before that request: the next
 * request's "before" without scanning again (nothing else writes between two requests). Undefined after a
 * request that succeeded (it may have written), or that failed a check, so the next one scans afresh.
 */
let unchangedSnapshot: string[] | undefined;
async function snapshotBefore(): Promise<string[]> {
  const snapshot = unchangedSnapshot ?? (await domainSnapshot(runtime.store));
  unchangedSnapshot = undefined;
  return snapshot;
}
/** Asserts that the failed request `what` wrote nothing, and keeps the state for the next request. */
async function expectUnchanged(before: string[], what: string): Promise<void> {
  const after = await domainSnapshot(runtime.store);
  expect(after, what).toEqual(before);
  unchangedSnapshot = after;
}

beforeAll(async () => {
  process.on('unhandledRejection', onUnhandled);
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  world = await createWorld(runtime, clock);
  const revoked = await seedToken(runtime.store, clock, { teamId: world.a.team.id, abilities: ABILITY_VALUES });
  await rest(runtime, { method: 'DELETE', path: `/v1/tokens/${revoked.id}`, token: world.a.token });
  revokedToken = revoked.token;
  victimTokenIds = [];
  for (let index = 0; index < 3; index++)
    victimTokenIds.push(
      (await seedToken(runtime.store, clock, { teamId: world.a.team.id, abilities: ['team:view'] })).id,
    );
  sessionId = await mcpSession(runtime, world.a.token);
});

beforeEach(() => {
  unchangedSnapshot = undefined; // another test may have written since
});

afterAll(() => {
  process.off('unhandledRejection', onUnhandled);
});

// ---------------------------------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------------------------------

const junk = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom('', ' ', '%', '%E0%A4%A', '..', 'null', '0', '-1', '1e309', '__proto__', 'constructor'),
);

const uuidPool = () =>
  fc.constantFrom(
    world.a.project.id,
    world.a.otherProject.id,
    world.b.project.id,
    world.a.endpoint.id,
    world.b.endpoint.id,
    randomUUID(),
  );
const deliveryPool = () => fc.constantFrom(world.a.deliveryId, world.b.deliveryId, 'dlv_01ARZ3NDEKTSV4RRFFQ69G5FAV');
const tokenIdPool = () => fc.constantFrom(...victimTokenIds, world.b.spare.id, '01ARZ3NDEKTSV4RRFFQ69G5FAV');
const anyId = () => fc.oneof(uuidPool(), deliveryPool(), tokenIdPool(), junk);

/** Any bearer the world knows, good or bad (undefined: no Authorization header). */
const bearer = () =>
  fc.constantFrom<string | undefined>(
    world.a.token,
    world.a.token,
    world.a.scoped.token,
    world.a.weak.token,
    world.b.token,
    revokedToken,
    undefined,
    'garbage',
    `svc_live_01ARZ3NDEKTSV4RRFFQ69G5FAV_${'x'.repeat(44)}`,
    `${world.a.token.slice(0, -3)}abc`,
  );

const FIELD_NAMES = [
  'name',
  'platform_type',
  'description',
  'url',
  'events',
  'allowed_ips',
  'is_active',
  'abilities',
  'project_ids',
  'since_hours',
  'team_id',
  'id',
  'secret',
] as const;
const fieldValue = () =>
  fc.oneof(
    fc.jsonValue({ maxDepth: 2 }),
    fc.constantFrom(
      'discord',
      'telegram',
      'https://receiver.example/hook',
      'http://insecure.example/hook',
      true,
      false,
      24,
      0,
      -1,
      1e9,
      null,
    ),
    fc.constantFrom(['project.created'], ['nope'], ['team:view'], ['root'], ['203.0.113.7'], ['10.0.0.0/8'], []),
    uuidPool().map((id) => [id]),
    junk,
  );

/** A body: absent, valid-ish objects of known fields (with some extra ones), any JSON, or not JSON at all. */
const body = () =>
  fc.oneof(
    { weight: 3, arbitrary: fc.dictionary(fc.constantFrom(...FIELD_NAMES), fieldValue(), { maxKeys: 5 }) },
    {
      weight: 1,
      arbitrary: fc.record({
        name: fc.string({ minLength: 1, maxLength: 20 }),
        platform_type: fc.constantFrom('discord', 'telegram', 'slack'),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        name: fc.string({ minLength: 1, maxLength: 10 }),
        url: fc.constant('https://receiver.example/h'),
        events: fc.constant(['project.created']),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        abilities: fc.subarray(['team:view', 'project:view', 'mcp:full', 'token:create'], { minLength: 1 }),
      }),
    },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 3 }).map((value) => JSON.stringify(value)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );

const contentType = () =>
  fc.option(
    fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/merge-patch+json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
      'application/jsonx',
      '',
    ),
    { nil: undefined },
  );

const query = () =>
  fc.dictionary(
    fc.oneof(
      fc.constantFrom('limit', 'cursor', 'token_id', 'operation', 'endpoint_id', 'status', 'event_type', 'project_id'),
      fc.string({ minLength: 1, maxLength: 8 }),
    ),
    fc.oneof(
      fc.constantFrom(
        '1',
        '25',
        '100',
        '101',
        '0',
        '-3',
        'abc',
        '1.5',
        'dead',
        'pending',
        'createProject',
        'list_projects',
      ),
      fc.jsonValue({ maxDepth: 1 }).map((value) => Buffer.from(JSON.stringify(value)).toString('base64url')),
      fc
        .constantFrom(`TEAM#${world.a.team.id}`, `TEAM#${world.b.team.id}`)
        .map((pk) => Buffer.from(JSON.stringify({ pk, sk: 'PROJECT#' })).toString('base64url')),
      anyId(),
    ),
    { maxKeys: 3 },
  );

/** A path: the route's own (parameters from the pools or junk), or an unknown one. */
const pathFor = (route: RouteDefinition) =>
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .oneof(
          anyId(),
          junk.map((value) => encodeURIComponent(value)),
        )
        .map((id) => route.rest.path.replace(/\{[a-z_]+\}/, id)),
    },
    { weight: 1, arbitrary: fc.webPath() },
    { weight: 1, arbitrary: junk.map((value) => `${route.rest.path.replace(/\{[a-z_]+\}/, 'x')}/${value}`) },
  );

const method = (route: RouteDefinition) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(route.rest.method) },
    { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'HEAD', 'OPTIONS') },
  );

/** A random request aimed at one route: mostly junk, or one a client would send (see `wellFormedFor`). */
const requestFor = (route: RouteDefinition) =>
  fc.oneof({ weight: 4, arbitrary: anyRequestFor(route) }, { weight: 1, arbitrary: wellFormedFor(route) });

/**
 * A request as a client would send it: the route's method and path (an id from the pools), the owner's
 * token and JSON, no query. Without these, about 2 % of requests succeed, and a run may reach no operation.
 */
const wellFormedFor = (route: RouteDefinition) =>
  fc.record({
    operationId: fc.constant(route.id),
    method: fc.constant(route.rest.method),
    path: fc
      .oneof(uuidPool(), deliveryPool(), tokenIdPool())
      .map((id) => route.rest.path.replaceAll(/\{[a-z_]+\}/g, id)),
    token: fc.constant<string | undefined>(world.a.token),
    body: body(),
    contentType: fc.constant<string | undefined>('application/json'),
    idempotencyKey: fc.option(fc.uuid(), { nil: undefined }),
    extraHeaders: fc.constant<Record<string, string>>({}),
    query: fc.constant<Record<string, string>>({}),
    sourceIp: fc.ipV4(),
  });

/** Any request aimed at one route: each part valid or junk. */
const anyRequestFor = (route: RouteDefinition) =>
  fc.record({
    operationId: fc.constant(route.id),
    method: method(route),
    path: pathFor(route),
    token: bearer(),
    body: body(),
    contentType: contentType(),
    idempotencyKey: fc.option(fc.oneof(fc.uuid(), junk), { nil: undefined }),
    extraHeaders: fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), fc.string({ maxLength: 30 }), {
      maxKeys: 2,
    }),
    query: query(),
    sourceIp: fc.ipV4(),
  });

const restRequest = fc.constantFrom(...ROUTES).chain(requestFor);

/** The two long properties walk every route and tool many times against DynamoDB Local (not a timing assertion). */
const FUZZ_TIMEOUT_MS = 240_000;

// ---------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------

describe('random REST requests to every route', () => {
  it(
    'never answer 500, answer failures with catalogue problems, and write nothing when they fail',
    async () => {
      const seenRoutes = new Set<string>();
      const seenStatuses = new Set<number>();
      const checkRequest = async (request: typeof restRequest extends fc.Arbitrary<infer R> ? R : never) => {
        clock.advance(1_000); // 1 s per request keeps the 600/min token bucket from filling up
        const headers: Record<string, string> = { ...request.extraHeaders };
        if (request.contentType !== undefined) headers['content-type'] = request.contentType;
        if (request.idempotencyKey !== undefined) headers['idempotency-key'] = request.idempotencyKey;
        const before = await snapshotBefore();
        const reply = await rest(runtime, {
          method: request.method,
          path: request.path,
          token: request.token,
          headers,
          body: request.body,
          query: request.query,
          sourceIp: request.sourceIp,
        });
        seenRoutes.add(request.operationId);
        seenStatuses.add(reply.status);
        expect(reply.status, reply.text).toBeLessThan(500);
        expect(reply.json, reply.text).toBeDefined();
        if (reply.status >= 400) {
          const problem = expectProblem(reply.json);
          expect(problem.status).toBe(reply.status);
          await expectUnchanged(before, `${request.method} ${request.path} → ${reply.status} ${problem.code} wrote`);
        }
      };
      await fc.assert(fc.asyncProperty(restRequest, checkRequest), { numRuns: 300, interruptAfterTimeLimit: 120_000 });
      // With many routes a uniform draw can miss one: each route it missed gets a few requests of its own.
      for (const route of ROUTES.filter((candidate) => !seenRoutes.has(candidate.id))) {
        await fc.assert(fc.asyncProperty(requestFor(route), checkRequest), { numRuns: 5 });
      }
      expect(seenRoutes.size).toBe(ROUTES.length);
      // The runs reached the operations, not only the validators.
      expect([...seenStatuses].some((status) => status < 300)).toBe(true);
      expect(unhandled).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe('random tool calls to every tool', () => {
  const principals = (): Principal[] => [
    world.a.principal,
    world.a.scoped.principal,
    world.a.weak.principal,
    world.b.principal,
  ];

  /** Arguments: valid-ish values for the tool's own parameters (ids from the pools), extra keys, or any JSON. */
  const argsFor = (name: string) => {
    const shape = TOOL_TABLE.find((entry) => entry.name === name)?.inputSchema.shape ?? {};
    const keys = Object.keys(shape);
    const value = (key: string) =>
      key === 'idempotency_key'
        ? fc.oneof(fc.uuid(), junk)
        : key === 'id' || key.endsWith('_id')
          ? fc.oneof(uuidPool(), deliveryPool(), tokenIdPool(), junk)
          : key === 'limit'
            ? fc.oneof(fc.integer({ min: -5, max: 200 }), junk)
            : key === 'cursor'
              ? fc.oneof(
                  junk,
                  fc
                    .constantFrom(`TEAM#${world.a.team.id}`, `TEAM#${world.b.team.id}`)
                    .map((pk) => Buffer.from(JSON.stringify({ pk, sk: 'PROJECT#' })).toString('base64url')),
                )
              : fieldValue();
    const own = keys.length
      ? fc
          .tuple(...keys.map((key) => fc.option(value(key), { nil: undefined })))
          .map((values) =>
            Object.fromEntries(keys.map((key, index) => [key, values[index]]).filter(([, v]) => v !== undefined)),
          )
      : fc.constant({});
    return fc.oneof(
      { weight: 5, arbitrary: own },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            own,
            fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 2 }),
          )
          .map(([a, b]) => ({ ...b, ...a })),
      },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) },
    );
  };

  const toolCall = fc
    .oneof(
      { weight: 9, arbitrary: fc.constantFrom(...TOOL_NAMES) },
      { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
    )
    .chain((name) =>
      fc.record({ name: fc.constant(name), args: argsFor(name), principal: fc.integer({ min: 0, max: 3 }) }),
    );

  it(
    'always resolve, never with INTERNAL_ERROR, answer failures with catalogue problems, and write nothing when they fail',
    async () => {
      const seenTools = new Set<string>();
      await fc.assert(
        fc.asyncProperty(toolCall, async ({ name, args, principal }) => {
          const before = await snapshotBefore();
          const result = await callTool(runtime, principals()[principal], name, args, randomUUID());
          if (result === null) {
            expect(TOOL_NAMES).not.toContain(name);
            return;
          }
          seenTools.add(name);
          expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
          if (result.isError) {
            const problem = expectProblem(result.structuredContent);
            expect(problem.code, problem.detail).not.toBe('INTERNAL_ERROR');
            await expectUnchanged(before, `${name} → ${problem.code} wrote`);
          }
        }),
        { numRuns: 400, interruptAfterTimeLimit: 120_000 },
      );
      expect(seenTools.size).toBeGreaterThan(TOOL_NAMES.length * 0.9);
      expect(unhandled).toEqual([]);
    },
    FUZZ_TIMEOUT_MS,
  );
});

describe('random requests at the tool server’s HTTP edge', () => {
  it('never answer 500; problems there are catalogue problems', async () => {
    const message = fc.oneof(
      fc.record({
        jsonrpc: fc.constant('2.0'),
        id: fc.integer(),
        method: fc.constantFrom('tools/call', 'tools/list', 'resources/read', 'ping', 'initialize', 'nope'),
        params: fc.jsonValue({ maxDepth: 2 }),
      }),
      fc.record({
        jsonrpc: fc.constant('2.0'),
        id: fc.integer(),
        method: fc.constant('tools/call'),
        params: fc.record({ name: fc.constantFrom(...TOOL_NAMES), arguments: fc.jsonValue({ maxDepth: 2 }) }),
      }),
      fc.jsonValue({ maxDepth: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          method: fc.constantFrom('POST', 'POST', 'POST', 'GET', 'DELETE', 'PUT'),
          body: fc.oneof(
            message.map((value) => JSON.stringify(value)),
            fc.string({ maxLength: 40 }),
          ),
          token: bearer(),
          withSession: fc.boolean(),
          contentType: contentType(),
          accept: fc.constantFrom('application/json, text/event-stream', 'application/json', '*/*', 'text/html'),
          ip: fc.ipV4(),
        }),
        async (request) => {
          clock.advance(1_000);
          const headers = new Headers({ Accept: request.accept, 'MCP-Protocol-Version': '2025-06-18' });
          if (request.contentType) headers.set('Content-Type', request.contentType);
          if (request.token) headers.set('Authorization', `Bearer ${request.token}`);
          if (request.withSession) headers.set('MCP-Session-Id', sessionId);
          const hasBody = request.method === 'POST' || request.method === 'PUT';
          const response = await handleMcpHttpRequest(
            runtime,
            new Request('https://mcp.test/mcp', {
              method: request.method,
              headers,
              body: hasBody ? request.body : undefined,
            }),
            {
              clientIp: request.ip,
            },
          );
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.headers.get('content-type')?.includes('application/problem+json'))
            expectProblem(JSON.parse(text));
        },
      ),
      { numRuns: 150, interruptAfterTimeLimit: 60_000 },
    );
    expect(unhandled).toEqual([]);
  });
});

describe('the principals used above', () => {
  it('are the world’s tokens, resolved as the pipelines resolve them', async () => {
    expect((await principalOf(runtime.store, world.a.scoped.token)).projectIds).toEqual([world.a.project.id]);
  });
});
