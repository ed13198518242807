/**
 * A property-based run of the whole OpenAPI document against the local server: for EVERY
 * documented operation, fast-check generates requests from the document itself — valid path parameters,
 * query and bodies drawn from their schemas (each checked with ajv against that schema, so "valid" means
 * valid by the document), and invalid ones (a required field dropped, a field of the wrong type, an
 * unknown field, a value outside its range, a body that is not JSON or not sent as JSON, a junk path
 * parameter, a missing, malformed or wrong token, a token lacking the ability or narrowed to a project) —
 * and sends them over HTTP to the real local server (`startLocalService`). Every answer must be one the
 * document describes: its status is listed under the operation's `responses`, its media type under that
 * response's `content`, and its body validates (ajv) against that schema. A request that is valid by
 * the document, sent with a token holding every ability, is never refused as VALIDATION_FAILED naming an
 * input field: the document may not accept what the server refuses.
 *
 * Ids that earlier answers returned are drawn again for id parameters and fields, so runs reach objects
 * that exist, not only 404s. Requests come from many loopback source addresses (the per-IP bucket of
 * requests without a valid token allows 5 per minute) and rotate among several full tokens. With
 * `OPENAPI_PROPERTY_REPORT=<file>` the statuses seen per operation and every mismatch are written there.
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ABILITY_VALUES } from '../../shared/catalogues/abilities.js';
import type { LocalService } from '../../shared/local/service.js';
import { documentAjv } from '../support/document-ajv.js';
import { seedToken, type SeededToken } from '../support/store.js';
import { startTestService } from '../support/local-service.js';
import { invalidArbitrary, schemaArbitrary, validValues, type JsonSchema } from '../support/schema-arbitrary.js';

/** Runs per documented operation and pass (valid and invalid requests together). */
const RUNS_PER_OPERATION = 8;
const FULL_TOKENS = 6;

let service: LocalService;
let document: { paths: Record<string, Record<string, OperationObject>> };
let full: SeededToken[];
let weak: SeededToken;
let scoped: SeededToken;
const ownTokenIds = new Set<string>();
const harvested: string[] = [];
/** Harvested ids by kind of object (`plan`, `teammember`, ...: the response schema's name in lower case). */
const harvestedByKind = new Map<string, string[]>();
/** The kind of object each operation answers with (its 2xx schema's component name, `List` removed). */
const answerKinds = new Map<string, string>();
/** `next_cursor` values each list returned, by operation id: a cursor is valid only for its own list. */
const cursors = new Map<string, string[]>();
const agents = new Map<string, Agent>();
let ajv: Ajv2020;
const validators = new WeakMap<object, ValidateFunction>();

type Parameter = { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: JsonSchema };
type MediaObject = { schema: JsonSchema };
type OperationObject = {
  operationId: string;
  security?: unknown[];
  'x-required-scopes'?: string[];
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaObject> };
  responses: Record<string, { description: string; content?: Record<string, MediaObject> }>;
};

beforeAll(async () => {
  service = await startTestService();
  const clock = service.runtime.clock;
  full = [];
  for (let index = 0; index < FULL_TOKENS; index++)
    full.push(
      await seedToken(service.store, clock, {
        teamId: service.demoTeamId,
        abilities: ABILITY_VALUES,
        name: `property ${index}`,
      }),
    );
  weak = await seedToken(service.store, clock, {
    teamId: service.demoTeamId,
    abilities: ['mcp:full', 'project:view-any'],
    name: 'property weak',
  });
  const project = await send({
    method: 'POST',
    path: '/v1/projects',
    token: full[0].token,
    body: { name: 'Property project', platform_type: 'discord' },
  });
  expect(project.status, project.text).toBe(201);
  scoped = await seedToken(service.store, clock, {
    teamId: service.demoTeamId,
    abilities: ABILITY_VALUES,
    projectIds: [(project.json as { id: string }).id],
    name: 'property scoped',
  });
  for (const token of [...full, weak, scoped]) ownTokenIds.add(token.id);
  harvest(project.json, 'project');
  const served = await send({ method: 'GET', path: '/openapi.json' });
  expect(served.status).toBe(200);
  for (const item of Object.values((served.json as typeof document).paths)) {
    for (const operation of Object.values(item)) {
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))?.[1];
      const reference = (success?.content?.['application/json']?.schema as { $ref?: string } | undefined)?.$ref;
      if (reference) answerKinds.set(operation.operationId, kindOf(reference.split('/').at(-1)!.replace(/List$/, '')));
    }
  }
  document = (await SwaggerParser.dereference(structuredClone(served.json) as never)) as unknown as typeof document;
  ajv = documentAjv();
}, 120_000);

afterAll(async () => {
  await Promise.all([...agents.values()].map((agent) => agent.close()));
  await service?.stop();
});

/** ajv's validator of a (dereferenced) schema, compiled once per schema object. */
function validatorOf(schema: object): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = ajv.compile(schema)));
  return validate;
}

/** A keep-alive connection from loopback address 127.20.x.y (x.y from `slot`). */
function agentFor(slot: number): Agent {
  const address = `127.20.${(slot >> 8) & 255}.${slot & 255}`;
  let agent = agents.get(address);
  if (!agent) agents.set(address, (agent = new Agent({ localAddress: address })));
  return agent;
}
let nextSlot = 0;

type Sent = { status: number; contentType: string; text: string; json: unknown };

/** One HTTP request to the local server from a fresh loopback address (4 requests per address at most). */
async function send(call: {
  method: string;
  path: string;
  query?: Record<string, string>;
  token?: string;
  headers?: Record<string, string>;
  body?: unknown;
  rawBody?: string;
}): Promise<Sent> {
  const url = new URL(call.path, service.baseUrl);
  for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = { ...call.headers };
  if (call.token) headers.authorization = `Bearer ${call.token}`;
  let body: string | undefined = call.rawBody;
  if (call.body !== undefined && body === undefined) {
    body = JSON.stringify(call.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await request(url, {
    method: call.method as 'GET',
    headers,
    body,
    dispatcher: agentFor(Math.floor(nextSlot++ / 4) % 60_000),
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, contentType: String(response.headers['content-type'] ?? ''), text, json };
}

/** A kind of object in lower-case letters only: `TeamMember`, `team-members`, `team_member_id` → `teammember(s)`. */
function kindOf(name: string): string {
  return name
    .replace(/_ids?$/, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase()
    .replace(/s$/, '');
}

/**
 * Collects the ids an answer shows for later requests — `id` as the kind of object the operation answers
 * with, `<kind>_id` as that kind — never our own tokens or the team.
 */
function harvest(value: unknown, answerKind: string | undefined, key = ''): void {
  if (Array.isArray(value)) return value.forEach((item) => harvest(item, answerKind, key));
  if (value && typeof value === 'object') {
    for (const [name, inner] of Object.entries(value))
      harvest(inner, key === '' || key === 'data' ? answerKind : undefined, name);
    return;
  }
  if (typeof value !== 'string' || !(key === 'id' || key.endsWith('_id'))) return;
  if (value === service.demoTeamId || ownTokenIds.has(value)) return;
  if (!/^[0-9a-f-]{36}$|^(dlv|evt)_[0-9A-Z]{26}$|^[0-9A-Z]{26}$/.test(value)) return;
  const kind = key === 'id' ? answerKind : kindOf(key);
  if (kind) {
    const pool = harvestedByKind.get(kind) ?? [];
    if (!pool.includes(value)) harvestedByKind.set(kind, [...pool.slice(-30), value]);
  }
  if (!harvested.includes(value)) harvested.push(value);
  if (harvested.length > 300) harvested.shift();
}

/**
 * Known ids for a parameter or field that names objects: those of its kind (a path's `{id}` takes the
 * kind of the segment before it) when there are any, else every harvested id. Never for
 * `confirm_team_id` (deleting the team would end the run).
 */
function knownFor(path: string) {
  return (name: string): readonly string[] | undefined => {
    if (name === 'confirm_team_id' || !(name === 'id' || name.endsWith('_id') || name.endsWith('_ids')))
      return undefined;
    const segment = name === 'id' ? (path.split('/{id}')[0].split('/').at(-1) ?? '') : name;
    const kind = kindOf(segment);
    const ofKind = [...harvestedByKind]
      .filter(([candidate]) => candidate === kind || candidate.endsWith(kind) || candidate.startsWith(kind))
      .flatMap(([, ids]) => ids);
    return ofKind.length ? ofKind : harvested.length ? [...harvested] : undefined;
  };
}

/** The object schema of a set of parameters (for ajv and for generation). */
function parametersSchema(parameters: Parameter[]): JsonSchema {
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter.schema])),
    required: parameters
      .filter((parameter) => parameter.required || parameter.in === 'path')
      .map((parameter) => parameter.name),
    additionalProperties: false,
  };
}

type Variant =
  | 'valid'
  | 'invalid body'
  | 'not JSON'
  | 'wrong content type'
  | 'invalid query'
  | 'unknown query parameter'
  | 'junk path parameter'
  | 'no token'
  | 'malformed token'
  | 'wrong secret'
  | 'weak token'
  | 'scoped token';

type Plan = {
  variant: Variant;
  params: Record<string, unknown>;
  query: Record<string, unknown>;
  body: unknown;
  token: number;
  idempotencyKey: string | undefined;
};

/** Generates requests for one operation: mostly valid, the rest invalid in one way each. */
function plansFor(operation: OperationObject, method: string, path: string): fc.Arbitrary<Plan> {
  const known = knownFor(path);
  const parameters = (operation.parameters ?? []).filter((parameter) => parameter.in !== 'header');
  const pathSchema = parametersSchema(parameters.filter((parameter) => parameter.in === 'path'));
  const querySchema = parametersSchema(parameters.filter((parameter) => parameter.in === 'query'));
  const bodySchema = operation.requestBody?.content['application/json']?.schema;
  const validParams = validValues(schemaArbitrary(pathSchema, { known }), validatorOf(pathSchema)) as fc.Arbitrary<
    Record<string, unknown>
  >;
  // An opaque cursor is valid only when its own list returned it (the schema says so): such a one, or none.
  const validQuery = (
    validValues(schemaArbitrary(querySchema, { known }), validatorOf(querySchema)) as fc.Arbitrary<
      Record<string, unknown>
    >
  ).chain((value) => {
    if (!('cursor' in value)) return fc.constant(value);
    const { cursor: _generated, ...rest } = value;
    const issued = cursors.get(operation.operationId) ?? [];
    return issued.length
      ? fc.oneof(
          fc.constant(rest),
          fc.constantFrom(...issued).map((cursor) => ({ ...rest, cursor })),
        )
      : fc.constant(rest);
  });
  const validBody = bodySchema
    ? validValues(schemaArbitrary(bodySchema, { known }), validatorOf(bodySchema))
    : fc.constant(undefined);
  const authenticated = (operation.security ?? []).length > 0;
  const variants: Variant[] = ['valid', 'valid', 'valid', 'valid', 'junk path parameter', 'unknown query parameter'];
  if (Object.keys(querySchema.properties ?? {}).length) variants.push('invalid query');
  if (bodySchema) variants.push('invalid body', 'not JSON', 'wrong content type');
  if (authenticated) variants.push('no token', 'malformed token', 'wrong secret', 'weak token', 'scoped token');
  if (!Object.keys(pathSchema.properties ?? {}).length) variants.splice(variants.indexOf('junk path parameter'), 1);
  return fc.constantFrom(...variants).chain((variant) =>
    fc.record({
      variant: fc.constant(variant),
      params: validParams,
      query:
        variant === 'invalid query'
          ? (invalidArbitrary(querySchema, validQuery).filter(
              (value) =>
                value !== null &&
                typeof value === 'object' &&
                !Array.isArray(value) &&
                validatorOf(querySchema)(value) === false,
            ) as fc.Arbitrary<Record<string, unknown>>)
          : variant === 'unknown query parameter'
            ? validQuery.map((value) => ({ ...value, not_a_parameter: 'x' }))
            : validQuery,
      body:
        variant === 'invalid body' && bodySchema
          ? invalidArbitrary(bodySchema, validBody).filter((value) => validatorOf(bodySchema)(value) === false)
          : validBody,
      token: fc.integer({ min: 0, max: FULL_TOKENS - 1 }),
      idempotencyKey:
        method === 'GET' ? fc.constant(undefined) : fc.option(fc.uuid({ version: 4 }), { nil: undefined }),
    }),
  );
}

/** The query string values of a generated query object (arrays and objects as JSON). */
function queryStrings(query: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(query).map(([name, value]) => [name, typeof value === 'string' ? value : JSON.stringify(value)]),
  );
}

function bearerOf(plan: Plan): string | undefined {
  const token = full[plan.token].token;
  switch (plan.variant) {
    case 'no token':
      return undefined;
    case 'malformed token':
      return 'svc_live_not-a-token';
    case 'wrong secret':
      return `${token.slice(0, -4)}QQQQ`;
    case 'weak token':
      return weak.token;
    case 'scoped token':
      return scoped.token;
    default:
      return token;
  }
}

describe('every documented operation, against the local server', () => {
  it('answers generated valid and invalid requests only with documented statuses, media types and bodies', async () => {
    const mismatches: string[] = [];
    const seen = new Map<string, Set<number>>();
    // Two passes: the second draws on the ids every module's answers gave in the first.
    for (const [path, item] of [...Object.entries(document.paths), ...Object.entries(document.paths)]) {
      for (const [method, operation] of Object.entries(item)) {
        const upper = method.toUpperCase();
        const statuses = seen.get(operation.operationId) ?? new Set<number>();
        seen.set(operation.operationId, statuses);
        await fc.assert(
          fc.asyncProperty(plansFor(operation, upper, path), async (plan) => {
            const concrete = path.replace(/\{([a-z_]+)\}/g, (_match, name: string) =>
              plan.variant === 'junk path parameter' && name === Object.keys(plan.params)[0]
                ? '%E2%80%AEjunk'
                : encodeURIComponent(String(plan.params[name])),
            );
            const headers: Record<string, string> = {};
            if (plan.idempotencyKey) headers['idempotency-key'] = plan.idempotencyKey;
            const call = {
              method: upper,
              path: concrete,
              query: queryStrings(plan.query),
              token: bearerOf(plan),
              headers,
              body: plan.body,
              rawBody: undefined as string | undefined,
            };
            if (plan.variant === 'not JSON') call.rawBody = '{"name": ';
            if (plan.variant === 'not JSON' || plan.variant === 'wrong content type')
              headers['content-type'] = plan.variant === 'not JSON' ? 'application/json' : 'text/plain';
            if (plan.variant === 'wrong content type' && call.body === undefined) call.rawBody = 'name=x';
            const answer = await send(call);
            statuses.add(answer.status);
            const what = `${operation.operationId} [${plan.variant}] ${upper} ${concrete}?${new URLSearchParams(call.query)} ${call.rawBody ?? JSON.stringify(call.body ?? null).slice(0, 200)} → ${answer.status} ${answer.text.slice(0, 300)}`;
            if (answer.status < 300) {
              harvest(answer.json, answerKinds.get(operation.operationId));
              const next = (answer.json as { next_cursor?: unknown } | undefined)?.next_cursor;
              if (typeof next === 'string')
                cursors.set(operation.operationId, [...(cursors.get(operation.operationId) ?? []).slice(-20), next]);
            }
            const documented = operation.responses[String(answer.status)] ?? operation.responses.default;
            if (!documented) return void mismatches.push(`undocumented status: ${what}`);
            const media = answer.contentType.split(';')[0].trim();
            if (!documented.content) {
              if (answer.text) mismatches.push(`a body where none is documented: ${what}`);
              return;
            }
            const described = documented.content[media];
            if (!described) return void mismatches.push(`undocumented media type ${media || '(none)'}: ${what}`);
            const validate = validatorOf(described.schema);
            if (!validate(answer.json))
              mismatches.push(`body does not match its schema (${ajv.errorsText(validate.errors)}): ${what}`);
            // The edge's own schema check (zod) answers exactly this detail; domain rules (the team's own id,
            // an ability the minter lacks, ...) answer their own. Only the former says the document is wrong.
            const problem = answer.json as { code?: string; detail?: string } | undefined;
            if (
              plan.variant === 'valid' &&
              problem?.code === 'VALIDATION_FAILED' &&
              /^The request (path|query|body) is not valid\.$/.test(problem.detail ?? '')
            ) {
              mismatches.push(`a request valid by the document refused as VALIDATION_FAILED: ${what}`);
            }
          }),
          { numRuns: RUNS_PER_OPERATION, seed: undefined },
        );
      }
    }
    if (process.env.OPENAPI_PROPERTY_REPORT) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(
        process.env.OPENAPI_PROPERTY_REPORT,
        [...[...seen].map(([id, statuses]) => `${id}: ${[...statuses].sort().join(',')}`), '', ...mismatches].join(
          '\n',
        ),
      );
    }
    const operations = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => operation.operationId),
    );
    expect([...seen.keys()].sort()).toEqual(operations.sort());
    // The runs reached the operations themselves, not only the validators and the authenticator: a success,
    // or an answer only the operation's own logic gives (404 of an id, 409 of a state, 502 of a provider call).
    const reachedOperation = (status: number) => status < 300 || status === 404 || status === 409 || status === 502;
    expect([...seen.values()].filter((statuses) => [...statuses].some(reachedOperation)).length).toBeGreaterThan(
      operations.length / 2,
    );
    expect(mismatches, mismatches.join('\n')).toEqual([]);
  }, 540_000);
});

describe('the generators', () => {
  it('make values that their schemas accept, and invalid ones they refuse', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 5 },
        limit: { type: 'integer', minimum: 1, maximum: 3 },
      },
      required: ['name'],
      additionalProperties: false,
    };
    const validate = validatorOf(schema);
    const valid = validValues(schemaArbitrary(schema), validate);
    fc.assert(
      fc.property(valid, (value) => validate(value) === true),
      { numRuns: 50 },
    );
    // Invalid candidates are mostly invalid (a wrong-type draw can land on a valid value; callers filter).
    const candidates = fc.sample(invalidArbitrary(schema, valid), 200);
    expect(candidates.filter((value) => validate(value) === false).length).toBeGreaterThan(150);
  });
});
