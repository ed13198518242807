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
 */
import { readdirSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { AUTHENTICATED } from '../../shared/operations/definition.js';
import { OPERATIONS, type RegisteredOperation } from '../../shared/operations/registry.js';
import { TOOL_TABLE } from '../../shared/mcp/tools.js';
import { createWorld, expectNoneOf, expectProblem, teamPartitionSnapshot, type World } from '../support/guarantees.js';
import { rest, tool, runAnyOperation } from '../support/calls.js';
import { createTestRuntime, seedToken, testClock, type TestRuntime } from '../support/store.js';
import {
  TEAM_WIDE,
  idsOf,
  type Expect,
  type IsolationCases,
  type OperationCases,
  type WalkCase,
} from '../isolation/cases.js';
import portalCases from '../isolation/portal-sessions.js';
import { subscriberPrincipal } from '../../shared/domain/portal-sessions/links.js';
import type { OperationId } from '../../shared/operations/registry.js';

// Every object module's cases, one file per module folder (`test/isolation/<folder>.ts`), in file name order.
const CASE_DIRECTORY = new URL('../isolation/', import.meta.url);
const CASE_FILES = readdirSync(CASE_DIRECTORY)
  .filter((name) => name.endsWith('.ts'))
  .sort();
const CASE_MODULES = (
  await Promise.all(
    CASE_FILES.map(
      (name) => import(new URL(name, CASE_DIRECTORY).href) as Promise<{ default?: IsolationCases<unknown> }>,
    ),
  )
).flatMap((file) => (file.default ? [file.default] : []));
const OPERATION_CASES = new Map<string, OperationCases<unknown>>(
  CASE_MODULES.flatMap((module) => Object.entries(module.operations)),
);
const OPERATION_BY_TOOL = new Map(
  OPERATIONS.filter((operation) => operation.tool).map((operation) => [operation.tool!.name, operation]),
);

let clock: ManualClock;
let runtime: TestRuntime;
let world: World;
/** What each module's `seed` returned, by module. */
const extras = new Map<IsolationCases<unknown>, unknown>();
let bBefore: string[];
let bSecrets: string[];

beforeAll(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  world = await createWorld(runtime, clock);
  for (const module of CASE_MODULES) if (module.seed) extras.set(module, await module.seed(runtime, world));
  bSecrets = [
    ...world.bSecrets,
    ...CASE_MODULES.flatMap((module) => module.secretsOfB?.(extras.get(module) as never) ?? []),
  ];
  bBefore = await teamPartitionSnapshot(runtime.store, world.b.team.id);
});

const extraOf = (cases: OperationCases<unknown>) =>
  extras.get(CASE_MODULES.find((module) => Object.values(module.operations).includes(cases))!);

/**
 * The scoped walk's case: the module's own, else derived (team-wide → TOKEN_MISSING_ABILITY; else team A's other
 * project).
 */
function scopedCase(cases: OperationCases<unknown>, teamWide: boolean): WalkCase<unknown> {
  if (cases.scoped) return cases.scoped;
  if (teamWide) return { input: cases.foreign.input, expect: TEAM_WIDE };
  return {
    input: (w, extra) => {
      const input = cases.foreign.input(w, extra);
      return 'project_id' in input ? { ...input, project_id: w.a.otherProject.id } : input;
    },
    expect: cases.foreign.expect,
  };
}

/** The REST call of an operation's input: path parameters into the path, the rest into the query (GET) or the body. */
function restCallOf(operation: RegisteredOperation, input: Record<string, unknown>) {
  const rest: Record<string, unknown> = { ...input };
  const path = operation.rest.path.replace(/\{([a-z_]+)\}/g, (_match, name: string) => {
    const value = String(rest[name]);
    delete rest[name];
    return encodeURIComponent(value);
  });
  if (operation.rest.method === 'GET') {
    return {
      method: operation.rest.method,
      path,
      query: Object.keys(rest).length
        ? Object.fromEntries(Object.entries(rest).map(([key, value]) => [key, String(value)]))
        : undefined,
    };
  }
  return { method: operation.rest.method, path, body: Object.keys(rest).length ? rest : undefined };
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
    expectation.ok(body, status, world);
  }
}

describe('the case files cover every operation and every tool', () => {
  it('has a case for every operation (every tool runs one)', () => {
    expect([...OPERATION_CASES.keys()].sort()).toEqual(OPERATIONS.map((operation) => operation.id).sort());
    for (const entry of TOOL_TABLE) expect(OPERATION_BY_TOOL.get(entry.name)?.id, entry.name).toBe(entry.operationId);
  });
});

for (const walk of ['foreign', 'scoped'] as const) {
  const who = walk === 'foreign' ? 'team A’s token against team B' : 'a project-scoped token';
  const tokenOf = () => (walk === 'foreign' ? world.a.token : world.a.scoped.token);
  const principalOf = () => (walk === 'foreign' ? world.a.principal : world.a.scoped.principal);
  const secretsFor = () =>
    walk === 'foreign' ? bSecrets : [world.a.otherProject.id, world.a.otherProject.name, ...bSecrets];

  describe(`${who}, on every REST route`, () => {
    for (const operation of OPERATIONS) {
      it(`${operation.rest.method} ${operation.rest.path} (${operation.id})`, async () => {
        const cases = OPERATION_CASES.get(operation.id)!;
        const testCase = walk === 'foreign' ? cases.foreign : scopedCase(cases, operation.teamWide);
        const call = restCallOf(operation, testCase.input(world, extraOf(cases)));
        const reply = await rest(runtime, { ...call, token: tokenOf() });
        check(testCase.expect, reply.status, reply.json, operation.id);
        if (operation.ability || walk === 'foreign')
          expectNoneOf(reply.text, notSent(secretsFor(), call), operation.id);
      });
    }
  });

  describe(`${who}, on every tool`, () => {
    for (const entry of TOOL_TABLE) {
      it(entry.name, async () => {
        const cases = OPERATION_CASES.get(entry.operationId)!;
        const testCase = walk === 'foreign' ? cases.foreign : scopedCase(cases, entry.teamWide);
        const args = testCase.input(world, extraOf(cases));
        const result = await tool(runtime, principalOf(), entry.name, args);
        check(
          testCase.expect,
          result.isError ? (result.structuredContent.status as number) : 200,
          result.structuredContent,
          entry.name,
        );
        expectNoneOf(JSON.stringify(result), notSent(secretsFor(), args), entry.name);
      });
    }
  });
}

// Operations that need a valid token and no ability (DESIGN D2: the smoke test) are walked a third time
// with a token of team A that holds none of the abilities the others need (the README's example token):
// the token's own team answers, never team B.
describe('a token of team A with no relevant ability, on every operation that needs none', () => {
  const bare = () =>
    seedToken(runtime.store, clock, {
      teamId: world.a.team.id,
      abilities: ['mcp:full', 'project:view-any'],
      name: 'bare',
    });
  const authenticatedOnly = OPERATIONS.filter((operation) => operation.ability === AUTHENTICATED);

  it('has at least the smoke test among them', () => {
    expect(authenticatedOnly.map((operation) => operation.id)).toContain('getCurrentTeam');
  });

  for (const operation of authenticatedOnly) {
    it(`${operation.rest.method} ${operation.rest.path} (${operation.id}) and its tool`, async () => {
      const token = await bare();
      const cases = OPERATION_CASES.get(operation.id)!;
      const call = restCallOf(operation, cases.foreign.input(world, extraOf(cases)));
      const reply = await rest(runtime, { ...call, token: token.token });
      check(cases.foreign.expect, reply.status, reply.json, operation.id);
      expectNoneOf(reply.text, notSent(bSecrets, call), operation.id);
      if (operation.tool) {
        const args = cases.foreign.input(world, extraOf(cases));
        const result = await tool(runtime, token.principal, operation.tool.name, args);
        check(
          cases.foreign.expect,
          result.isError ? (result.structuredContent.status as number) : 200,
          result.structuredContent,
          operation.tool.name,
        );
        expectNoneOf(JSON.stringify(result), notSent(bSecrets, args), operation.tool.name);
      }
    });
  }
});

// The subscriber portal (DESIGN D27): a subscriber principal sees only its own subscriber, subscriptions and
// payments — another subscriber's of the same project, another project's and another team's are the same
// NOT_FOUND as an unknown id; lists hold only its own; operations outside the portal's are refused.
describe('a subscriber acting in the portal', () => {
  const seeded = () =>
    extras.get(portalCases as IsolationCases<unknown>) as Awaited<ReturnType<NonNullable<typeof portalCases.seed>>>;
  const principal = () =>
    subscriberPrincipal({
      team_id: world.a.team.id,
      project_id: seeded().projectId,
      subscriber_id: seeded().own.subscriberId,
    });
  const run = (operationId: OperationId, input: Record<string, unknown>) =>
    runAnyOperation<any>(runtime, principal(), operationId, input, {
      requestId: `portal-${operationId}`,
      idempotencyKey: crypto.randomUUID(),
      surface: 'portal',
    });
  const others = () => ({
    sibling: seeded().sibling,
    otherProject: seeded().otherProject,
    otherTeam: seeded().otherTeam,
  });

  it('reads its own subscriber, subscription and payment', async () => {
    const own = seeded().own;
    for (const [operationId, id] of [
      ['getSubscriber', own.subscriberId],
      ['getSubscription', own.subscriptionId],
      ['getPayment', own.paymentId],
    ] as const) {
      const outcome = await run(operationId, { id });
      expect(outcome.ok && outcome.result.id, operationId).toBe(id);
    }
  });

  for (const whose of ['sibling', 'otherProject', 'otherTeam'] as const) {
    it(`gets NOT_FOUND for the ${whose === 'sibling' ? 'other subscriber of its project' : whose === 'otherProject' ? 'subscriber of another project of its team' : 'subscriber of another team'}`, async () => {
      const target = others()[whose];
      const calls: [OperationId, Record<string, unknown>][] = [
        ['getSubscriber', { id: target.subscriberId }],
        ['getSubscription', { id: target.subscriptionId }],
        ['getPayment', { id: target.paymentId }],
        ['cancelSubscription', { id: target.subscriptionId }],
        ['resumeSubscription', { id: target.subscriptionId }],
      ];
      for (const [operationId, input] of calls) {
        const outcome = await run(operationId, input);
        expect(outcome.ok ? outcome.result : outcome.problem.code, operationId).toBe('NOT_FOUND');
        if (!outcome.ok)
          expectNoneOf(
            JSON.stringify(outcome.problem),
            notSent([...bSecrets, seeded().otherTeamProjectId], input),
            operationId,
          );
      }
    });
  }

  it('lists only its own subscriptions and payments, whatever subscriber it asks for', async () => {
    const { own, sibling } = seeded();
    for (const query of [{}, { subscriber_id: sibling.subscriberId }]) {
      const subscriptions = await run('listSubscriptions', { project_id: seeded().projectId, ...query });
      expect(subscriptions.ok && idsOf(subscriptions.result)).toEqual([own.subscriptionId]);
      const payments = await run('listPayments', { project_id: seeded().projectId, ...query });
      expect(payments.ok && idsOf(payments.result).sort()).toEqual([own.paymentId, own.pendingPaymentId].sort());
    }
    for (const operationId of ['listSubscriptions', 'listPayments'] as const) {
      const outcome = await run(operationId, { project_id: seeded().otherTeamProjectId });
      expect(outcome.ok ? outcome.result : outcome.problem.code, operationId).toBe('NOT_FOUND');
    }
  });

  it('cancels its own subscription at the period end only, withdraws that, and cannot resume what the creator paused', async () => {
    const id = seeded().own.subscriptionId;
    const code = (outcome: Awaited<ReturnType<typeof run>>) =>
      outcome.ok ? outcome.result.status : outcome.problem.code;
    expect(code(await run('cancelSubscription', { id, at_period_end: false }))).toBe('CONFLICT');
    expect(code(await run('cancelSubscription', { id }))).toBe('pending_cancellation');
    expect(code(await run('resumeSubscription', { id }))).not.toBe('CONFLICT');
    const paused = await rest(runtime, {
      method: 'POST',
      path: `/v1/subscriptions/${id}/pause`,
      token: world.a.token,
      body: {},
    });
    expect(paused.json.status, paused.text).toBe('paused');
    expect(code(await run('resumeSubscription', { id }))).toBe('CONFLICT');
    expect(
      (await rest(runtime, { method: 'POST', path: `/v1/subscriptions/${id}/resume`, token: world.a.token })).json
        .status,
    ).toBe('active');
  });

  it('may not use operations outside the portal, even those its abilities name', async () => {
    const { own, projectId } = seeded();
    const calls: [OperationId, Record<string, unknown>][] = [
      ['checkProjectAccess', { project_id: projectId, subscriber_id: own.subscriberId }],
      ['pauseSubscription', { id: own.subscriptionId }],
      ['listSubscribers', { project_id: projectId }],
      ['getProject', { id: projectId }],
      ['createPortalSession', { id: own.subscriberId }],
    ];
    for (const [operationId, input] of calls) {
      const outcome = await run(operationId, input);
      expect(outcome.ok ? outcome.result : outcome.problem.code, operationId).toBe('TOKEN_MISSING_ABILITY');
    }
  });
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
    for (let index = 0; index < 3; index++)
      await rest(runtime, {
        method: 'POST',
        path: '/v1/projects',
        token: world.a.token,
        body: { name: `Filler ${index}`, platform_type: 'discord' },
      });
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await rest(runtime, {
        method: 'GET',
        path: '/v1/projects',
        token: world.a.scoped.token,
        query: cursor ? { limit: '1', cursor } : { limit: '1' },
      });
      expect(reply.status).toBe(200);
      seen.push(...idsOf(reply.json));
      cursor = reply.json.next_cursor ?? undefined;
      if (cursor) expect(Buffer.from(cursor, 'base64url').toString()).toContain(world.a.project.id);
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual([world.a.project.id]);
    expect(pages).toBe(1);
    // A team-wide cursor (which names other projects) cannot be replayed by the scoped token to see them.
    const teamPage = await rest(runtime, {
      method: 'GET',
      path: '/v1/projects',
      token: world.a.token,
      query: { limit: '1' },
    });
    const replayed = await rest(runtime, {
      method: 'GET',
      path: '/v1/projects',
      token: world.a.scoped.token,
      query: { limit: '100', cursor: teamPage.json.next_cursor },
    });
    expect(replayed.status).toBe(200);
    expect(idsOf(replayed.json).every((id) => id === world.a.project.id)).toBe(true);
  });

  it('rejects another team’s cursor as invalid instead of reading with it', async () => {
    const bPage = await rest(runtime, {
      method: 'GET',
      path: '/v1/tokens',
      token: world.b.token,
      query: { limit: '1' },
    });
    expect(bPage.json.next_cursor).toEqual(expect.any(String));
    const reply = await rest(runtime, {
      method: 'GET',
      path: '/v1/tokens',
      token: world.a.token,
      query: { cursor: bPage.json.next_cursor },
    });
    expect(reply.status).toBe(422);
    expectNoneOf(reply.text, world.bSecrets, 'foreign cursor');
  });

  it('resolves the team from the token only: a team id in the request changes nothing', async () => {
    const reply = await rest(runtime, {
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: 'Smuggled', platform_type: 'discord', team_id: world.b.team.id },
    });
    expectProblem(reply.json, 'VALIDATION_FAILED');
    const listed = await rest(runtime, {
      method: 'GET',
      path: '/v1/projects',
      token: world.a.token,
      query: { team_id: world.b.team.id },
    });
    expectProblem(listed.json, 'VALIDATION_FAILED');
    expect(await teamPartitionSnapshot(runtime.store, world.b.team.id)).toEqual(bBefore);
  });
});
