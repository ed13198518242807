/**
 * Helpers for the cross-cutting guarantee tests (authorization, tenant isolation, rate limits,
 * idempotency, errors, activity log): problem-document checks, table snapshots that tell domain writes
 * from bookkeeping (activity entries, rate counters), stores that pause or fail chosen DynamoDB commands,
 * and a world of two teams. Calls on each surface come from `test/support/calls.ts`.
 *
 * Stores, runtimes, the manual clock (`testClock`) and tokens with their principals (`seedTeam`,
 * `seedToken`) come from `test/support/store.ts` (one DynamoDB Local per run, fresh tables).
 */
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { ABILITY_VALUES, type Ability } from '../../shared/catalogues/abilities.js';
import { ERROR_CODE_VALUES, errorCode, type ErrorCode } from '../../shared/catalogues/error-codes.js';
import type { Clock } from '../../shared/clock.js';
import { authenticate, type Principal } from '../../shared/auth/principal.js';
import type { ToolCallResult } from '../../shared/mcp/tools.js';
import type { RestReply } from './calls.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import type { Project } from '../../shared/domain/projects/schema.js';
import type { Runtime } from '../../shared/runtime.js';
import { Problem } from '../../shared/schemas/common.js';
import { createStore, type Store } from '../../shared/store/store.js';
import type { Team } from '../../shared/domain/teams/schema.js';
import { sendTestEvent } from '../../shared/domain/webhook-deliveries/fan-out.js';
import { createWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import { seedTeam, seedToken } from './store.js';
import { changeTier } from '../../shared/domain/billing/changes.js';

// ---------------------------------------------------------------------------------------------------
// Problems (DESIGN D1)
// ---------------------------------------------------------------------------------------------------

/**
 * Asserts that `document` is a problem document of the catalogue (DESIGN D1): every member present,
 * `code` in `service://enums/error-code`, `status`, `title`, `hint`, `type` and `docs_url` equal to the
 * code's catalogue entry. With `code`, also that it is that code. Returns the document.
 */
export function expectProblem(
  document: unknown,
  code?: ErrorCode,
): {
  code: ErrorCode;
  status: number;
  detail: string;
  request_id: string;
  errors?: { path: string; message: string }[];
} {
  const parsed = Problem.safeParse(document);
  expect(parsed.success, `not a problem document: ${JSON.stringify(document)}`).toBe(true);
  const problem = parsed.data!;
  expect(ERROR_CODE_VALUES as readonly string[]).toContain(problem.code);
  const entry = errorCode(problem.code as ErrorCode);
  expect(problem).toMatchObject({
    status: entry.status,
    title: entry.title,
    hint: entry.hint,
    type: entry.docs_url,
    docs_url: entry.docs_url,
  });
  if (code) expect(problem.code, problem.detail).toBe(code);
  return problem as ReturnType<typeof expectProblem>;
}

/** Asserts a REST reply is a problem (content type, body, `request_id` = `X-Request-Id`) with `code`. */
export function expectRestProblem(reply: RestReply, code: ErrorCode) {
  expect(reply.headers['content-type'], reply.text).toContain('application/problem+json');
  const problem = expectProblem(reply.json, code);
  expect(reply.status).toBe(problem.status);
  expect(problem.request_id).toBe(reply.headers['x-request-id']);
  return problem;
}

/** Asserts a tool result is an `isError` result whose `structuredContent` is a problem with `code`. */
export function expectToolProblem(result: ToolCallResult, code: ErrorCode) {
  expect(result.isError, JSON.stringify(result.structuredContent)).toBe(true);
  const problem = expectProblem(result.structuredContent, code);
  expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent);
  return problem;
}

// ---------------------------------------------------------------------------------------------------
// Table snapshots
// ---------------------------------------------------------------------------------------------------

/** Leaves {@link isBookkeeping} items out of a scan in DynamoDB itself (the same test, as a FilterExpression). */
const WITHOUT_BOOKKEEPING = {
  FilterExpression: 'NOT (#entity = :activity OR begins_with(pk, :rate))',
  ExpressionAttributeNames: { '#entity': 'entity' },
  ExpressionAttributeValues: { ':activity': 'activity', ':rate': 'RATE#' },
};

/**
 * Every item of the main table (strongly consistent scan, all pages); with `withoutBookkeeping`, every item that is not
 * {@link isBookkeeping}.
 */
export async function scanTable(
  store: Store,
  tableName: string = store.tableName,
  options: { withoutBookkeeping?: boolean } = {},
): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await store.document.send(
      new ScanCommand({
        TableName: tableName,
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
        ...(options.withoutBookkeeping ? WITHOUT_BOOKKEEPING : {}),
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return items;
}

/**
 * True for items every request may write whatever its outcome: activity entries (each REST write and
 * tool call is logged, failures included) and rate-limit counters (each request is counted).
 */
function isBookkeeping(item: Record<string, unknown>): boolean {
  return item.entity === 'activity' || String(item.pk).startsWith('RATE#');
}

/**
 * `items` as domain state: every item that is not {@link isBookkeeping}, as sorted JSON lines (keys sorted),
 * without a token's `last_used_at` (authentication's hourly stamp of use, written by refused requests too).
 */
export function domainLines(items: readonly Record<string, unknown>[]): string[] {
  return items
    .filter((item) => !isBookkeeping(item))
    .map((item) =>
      item.entity === 'token'
        ? Object.fromEntries(Object.entries(item).filter(([name]) => name !== 'last_used_at'))
        : item,
    )
    .map((item) => JSON.stringify(Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : 1)))))
    .sort();
}

/**
 * The domain state of both tables ({@link domainLines}). Two equal snapshots mean no request in between
 * wrote, changed or deleted any domain object, idempotency record, token or outbox event.
 */
export async function domainSnapshot(store: Store): Promise<string[]> {
  // Bookkeeping is left out by the scans already (fewer items to send and parse); domainLines checks again.
  const scan = (tableName: string) => scanTable(store, tableName, { withoutBookkeeping: true });
  return domainLines([...(await scan(store.tableName)), ...(await scan(store.deadLetterTableName))]);
}

/** The items of one team's partition (`TEAM#<id>`), sorted JSON lines, for "team B unchanged" checks. */
export async function teamPartitionSnapshot(store: Store, teamId: string): Promise<string[]> {
  return (await domainSnapshot(store)).filter((line) => (JSON.parse(line) as { pk: string }).pk === `TEAM#${teamId}`);
}

/** Number of project items of a team in the table. */
export async function countProjects(store: Store, teamId: string): Promise<number> {
  return (await scanTable(store)).filter(
    (item) => item.pk === `TEAM#${teamId}` && String(item.sk).startsWith('PROJECT#'),
  ).length;
}

// ---------------------------------------------------------------------------------------------------
// Stores that pause or fail chosen commands
// ---------------------------------------------------------------------------------------------------

type Command = { constructor: { name: string }; input: Record<string, unknown> };

/** Wraps a store so that `send` runs `intercept` first (which may wait or throw). */
function interceptedStore(store: Store, intercept: (command: Command) => Promise<void>): Store {
  const document = new Proxy(store.document, {
    get(target, property, receiver) {
      if (property === 'send') {
        return async (command: Command, ...rest: unknown[]) => {
          await intercept(command);
          return (target.send as (...args: unknown[]) => Promise<unknown>).call(target, command, ...rest);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
  return createStore({ document, tableName: store.tableName, deadLetterTableName: store.deadLetterTableName });
}

/**
 * A store whose first command matching `match` (e.g. the project transaction) waits until `release()`.
 * `reached` resolves when that command arrives. Commands after the first pass straight through.
 */
export function gatedStore(
  store: Store,
  match: (command: Command) => boolean,
): { store: Store; reached: Promise<void>; release(): void } {
  let arrive!: () => void;
  let open!: () => void;
  const reached = new Promise<void>((resolve) => (arrive = resolve));
  const released = new Promise<void>((resolve) => (open = resolve));
  let used = false;
  return {
    store: interceptedStore(store, async (command) => {
      if (!used && match(command)) {
        used = true;
        arrive();
        await released;
      }
    }),
    reached,
    release: () => open(),
  };
}

/** A store on which every command matching `match` fails with `error` (an injected infrastructure fault). */
export function failingStore(
  store: Store,
  match: (command: Command) => boolean,
  error: Error = new Error('injected store failure: connection reset by peer (secret-looking internal detail)'),
): Store {
  return interceptedStore(store, async (command) => {
    if (match(command)) throw error;
  });
}

/**
 * A store over the same tables that records the name of every DynamoDB command it sends (e.g.
 * `UpdateCommand`, `TransactWriteCommand`), in order: a request count is behaviour.
 */
export function recordingStore(store: Store): { store: Store; commands: string[] } {
  const commands: string[] = [];
  return {
    store: interceptedStore(store, async (command) => {
      commands.push(command.constructor.name);
    }),
    commands,
  };
}

/** The runtime with another store (same clock, queue, scheduler and transport). */
export function withStore<R extends Runtime>(runtime: R, store: Store): R {
  return { ...runtime, store };
}

// ---------------------------------------------------------------------------------------------------
// A world of two teams
// ---------------------------------------------------------------------------------------------------

/**
 * A team on the `business` tier with a full-ability token, a project, a webhook endpoint (with its secret) and a
 * delivery.
 */
interface SeededTeam {
  team: Team;
  /** Bearer string of a token holding every ability (team-wide). */
  token: string;
  principal: Principal;
  project: Project;
  endpoint: { id: string; secret: string };
  deliveryId: string;
  /** A second token of the team (for revoke / list checks), with its bearer string. */
  spare: { id: string; token: string };
}

/** Team A (the caller) and team B (the victim), plus project-scoped and weak tokens of team A. */
export interface World {
  a: SeededTeam & {
    /** A second project of team A, outside the project-scoped token's scope. */
    otherProject: Project;
    /** Token of team A narrowed to `a.project` (`scope:project:<uuid>`), holding every ability. */
    scoped: { id: string; token: string; principal: Principal };
    /** Token of team A holding only `team:view` and `mcp:full`. */
    weak: { id: string; token: string; principal: Principal };
  };
  b: SeededTeam;
  /** Every id, name and secret of team B: none may appear in anything team A receives. */
  bSecrets: string[];
}

/** Resolves a bearer string to its principal, exactly as the pipelines do. */
export async function principalOf(store: Store, token: string): Promise<Principal> {
  return authenticate(store, `Bearer ${token}`);
}

async function seedFullTeam(runtime: Runtime, clock: Clock): Promise<SeededTeam> {
  const seeded = await seedTeam(runtime.store, clock, undefined, 'free');
  // On `business` (no tier limits, D20), so the many creates of the guarantee tests never meet one.
  await changeTier(runtime, seeded.team.id, 'business');
  const { principal } = seeded;
  const project = await createProject(runtime, principal, {
    name: `Project of ${seeded.team.name}`,
    platform_type: 'discord',
  });
  const endpoint = await createWebhookEndpoint(runtime, principal, {
    name: `Hook of ${seeded.team.name}`,
    url: 'https://receiver.example/hooks',
    events: ['project.created'],
  });
  const delivery = await sendTestEvent(runtime, principal, endpoint.id);
  const spare = await seedToken(runtime.store, clock, {
    teamId: seeded.team.id,
    abilities: ['team:view'],
    name: 'spare',
  });
  return {
    team: seeded.team,
    token: seeded.token,
    principal,
    project,
    endpoint: { id: endpoint.id, secret: endpoint.secret },
    deliveryId: delivery.id,
    spare: { id: spare.id, token: spare.token },
  };
}

/**
 * Seeds {@link World}: two teams with a project, an endpoint, a test delivery and two tokens each;
 * team A also gets a second project, a token scoped to its first project and a weak token.
 */
export async function createWorld(runtime: Runtime, clock: Clock): Promise<World> {
  const a = await seedFullTeam(runtime, clock);
  const b = await seedFullTeam(runtime, clock);
  const otherProject = await createProject(runtime, a.principal, {
    name: 'Other project of A',
    platform_type: 'telegram',
  });
  const scoped = await seedToken(runtime.store, clock, {
    teamId: a.team.id,
    abilities: ABILITY_VALUES,
    projectIds: [a.project.id],
    name: 'scoped',
  });
  const weakAbilities: Ability[] = ['team:view', 'mcp:full'];
  const weak = await seedToken(runtime.store, clock, { teamId: a.team.id, abilities: weakAbilities, name: 'weak' });
  const bSecrets = [
    b.team.id,
    b.team.name,
    b.token.split('_').at(-1)!,
    b.spare.token.split('_').at(-1)!,
    b.principal.tokenId,
    b.spare.id,
    b.project.id,
    b.project.name,
    b.endpoint.id,
    b.endpoint.secret,
    b.deliveryId,
  ];
  return {
    a: { ...a, otherProject, scoped, weak },
    b,
    bSecrets,
  };
}

/** Asserts that `text` contains none of `secrets` (ids, names, secrets of another tenant). */
export function expectNoneOf(text: string, secrets: readonly string[], what: string): void {
  for (const secret of secrets)
    expect(text.includes(secret), `${what} leaks ${secret}: ${text.slice(0, 400)}`).toBe(false);
}
