/**
 * The machine-readable API description (interface "What the service does" 4): the document served at
 * `GET /openapi.json` VALIDATES as OpenAPI with `@apidevtools/swagger-parser` (schema and semantic
 * checks, not just parsing), describes exactly the operations of the route table with `x-required-scopes`
 * naming each one's ability, and generic tooling can consume it: a client generated from it with
 * `openapi-typescript` type-checks (`tsc --noEmit`) against a small program that uses several
 * operations — and rejects misuse (`@ts-expect-error` lines fail the check if the types were `any`).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONNECTABLE_PAYMENT_PROVIDERS } from '../../shared/catalogues/payment-providers.js';
import { OPERATIONS as ROUTES } from '../../shared/operations/registry.js';
import { rest } from '../support/calls.js';
import { createTestRuntime, testClock } from '../support/store.js';

const run = promisify(execFile);
const TSC = createRequire(import.meta.url).resolve('typescript/bin/tsc');

let document: Record<string, any>;
let directory: string;
let runtime: Awaited<ReturnType<typeof createTestRuntime>>;

beforeAll(async () => {
  runtime = await createTestRuntime({ clock: testClock() });
  const reply = await rest(runtime, { method: 'GET', path: '/openapi.json' });
  expect(reply.status).toBe(200);
  document = reply.json;
  directory = mkdtempSync(join(tmpdir(), 'openapi-client-'));
});

afterAll(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('the served OpenAPI document', () => {
  it('validates with swagger-parser', async () => {
    const api = await SwaggerParser.validate(structuredClone(document) as never);
    expect((api as { openapi?: string }).openapi).toMatch(/^3\.1\./);
  });

  it('describes exactly the route table, each operation with x-required-scopes naming its ability', () => {
    expect(document.paths['/v1/teams/current'].get['x-required-scopes']).toEqual([]);
    expect(document.paths['/v1/teams/current'].get.security).toEqual([{ bearerAuth: [] }]);
    const documented: string[] = [];
    for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(item))
        documented.push(`${method.toUpperCase()} ${path} ${operation.operationId}`);
    }
    const routes = ROUTES;
    expect(documented.sort()).toEqual(
      routes.map((route) => `${route.rest.method} ${route.rest.path} ${route.id}`).sort(),
    );
    for (const route of routes) {
      const operation = document.paths[route.rest.path][route.rest.method.toLowerCase()];
      // 'authenticated' (the smoke test, DESIGN D2): a valid token, no ability — bearer security, no scope.
      expect(operation['x-required-scopes'], route.id).toEqual(
        route.ability && route.ability !== 'authenticated' ? [route.ability] : [],
      );
      if (route.ability) {
        expect(operation.security).toEqual([{ bearerAuth: [] }]);
        for (const status of ['401', '429'])
          expect(
            operation.responses[status]?.content?.['application/problem+json'],
            `${route.id} ${status}`,
          ).toBeDefined();
        expect(operation.responses['403'] !== undefined, `${route.id} 403`).toBe(
          route.ability !== 'authenticated' || route.teamWide,
        );
      } else {
        expect(operation.security, route.id).toEqual([]);
      }
      if (route.rest.method !== 'GET') {
        expect(
          operation.parameters.find((parameter: { name: string }) => parameter.name === 'Idempotency-Key')?.schema,
        ).toEqual({ type: 'string', format: 'uuid' });
      }
      expect(operation.responses[String(route.rest.successStatus)], route.id).toBeDefined();
    }
  });

  it('names its servers and license, documents 431 everywhere and 413/415 on writes, and gives every body an example that validates', async () => {
    expect(document.servers).toEqual([expect.objectContaining({ url: '/' })]);
    expect(document.info.license).toMatchObject({ name: expect.any(String), url: expect.stringMatching(/^https:/) });
    expect(JSON.stringify(document)).not.toMatch(/DESIGN|D\d+\b/);
    const ajv = new Ajv2020({ strict: false });
    const dereferenced = (await SwaggerParser.dereference(structuredClone(document) as never)) as any;
    for (const route of ROUTES) {
      const operation = dereferenced.paths[route.rest.path][route.rest.method.toLowerCase()];
      expect(operation.responses['431'], route.id).toBeDefined();
      if (route.rest.method !== 'GET')
        for (const status of ['413', '415']) expect(operation.responses[status], `${route.id} ${status}`).toBeDefined();
      const media = [
        operation.requestBody?.content?.['application/json'],
        ...Object.values(operation.responses).flatMap((response: any) => Object.values(response.content ?? {})),
      ].filter(Boolean) as {
        schema: object;
        example: unknown;
      }[];
      for (const item of media) {
        expect(item.example, route.id).toBeDefined();
        const validate = ajv.compile(item.schema);
        expect(validate(item.example), `${route.id}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
  });

  it('documents what the edge refuses, so a request valid by the document is not refused as invalid', async () => {
    const dereferenced = (await SwaggerParser.dereference(structuredClone(document) as never)) as any;
    const bodyOf = (path: string, method: string) =>
      dereferenced.paths[path][method].requestBody.content['application/json'].schema;
    // Trimmed names: blank text is refused, so the document says a non-space character is needed.
    expect(bodyOf('/v1/projects', 'post').properties.name).toMatchObject({ minLength: 1, pattern: '\\S' });
    expect(new RegExp(bodyOf('/v1/projects', 'post').properties.name.pattern).test('   ')).toBe(false);
    // Currencies are the ISO 4217 list itself; payment providers only the connectable ones.
    expect(bodyOf('/v1/projects/{project_id}/plans', 'post').properties.currency.enum).toEqual(
      expect.arrayContaining(['EUR', 'USD', 'JPY']),
    );
    expect(bodyOf('/v1/projects/{project_id}/plans', 'post').properties.currency.enum).not.toContain('DEE');
    expect(bodyOf('/v1/projects/{project_id}/payment-provider', 'put').properties.provider.enum).toEqual([
      ...CONNECTABLE_PAYMENT_PROVIDERS,
    ]);
    // A cursor is base64url text; any other is VALIDATION_FAILED, as its description says.
    const cursor = dereferenced.paths['/v1/projects'].get.parameters.find(
      (parameter: { name: string }) => parameter.name === 'cursor',
    );
    expect(cursor.schema.pattern).toBe('^[A-Za-z0-9_-]+$');
    expect(cursor.schema.description).toMatch(/VALIDATION_FAILED/);
    // Public writes document their 404, 422 and 429; ids named in a body document 404.
    expect(Object.keys(dereferenced.paths['/v1/team-invitations/accept'].post.responses)).toEqual(
      expect.arrayContaining(['404', '422', '429']),
    );
    expect(dereferenced.paths['/v1/groups'].post.responses['404']).toBeDefined();
  });

  it('passes Redocly lint (recommended rules) with no error and no warning', async () => {
    const file = join(directory, 'openapi.json');
    writeFileSync(file, JSON.stringify(document));
    const cli = join(dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
    // Telemetry and the update check off: no test reaches the internet.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' };
    const result = await run(process.execPath, [cli, 'lint', file, '--format=json'], {
      env,
      maxBuffer: 16 * 1024 * 1024,
    }).catch((error: { stdout?: string; stderr?: string }) => error);
    const report = JSON.parse(String(result.stdout)) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 120_000);

  it('lists in Allow only the methods of the path itself', async () => {
    const reply = await rest(runtime, { method: 'DELETE', path: '/v1/webhook-deliveries/replay-dead' });
    expect(reply.status).toBe(405);
    expect(reply.headers.allow).toBe('POST');
  });
});

describe('a client generated from it', () => {
  it('type-checks a program that uses several operations, and refuses misuse', async () => {
    const types = astToString(await openapiTS(structuredClone(document) as never));
    writeFileSync(join(directory, 'api.ts'), types);
    writeFileSync(
      join(directory, 'client.ts'),
      `import type { paths } from './api.js';

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;

// POST /v1/projects
type CreateProjectBody = Json<paths['/v1/projects']['post']['requestBody']>;
export const body: CreateProjectBody = { name: 'Book club', platform_type: 'discord', description: 'Weekly' };
// @ts-expect-error platform_type is one of the catalogue values
export const wrongPlatform: CreateProjectBody = { name: 'x', platform_type: 'myspace' };
// @ts-expect-error name is required
export const missingName: CreateProjectBody = { platform_type: 'discord' };
type Created = Json<paths['/v1/projects']['post']['responses'][201]>;
declare const created: Created;
export const createdId: string = created.id;
export const status: 'active' | 'archived' = created.status;
// @ts-expect-error projects have no secret
export const noSecret = created.secret;

// GET /v1/projects/{id}
type GetProjectPath = paths['/v1/projects/{project_id}']['get']['parameters']['path'];
export const path: GetProjectPath = { project_id: '7f7e8a52-2b1c-4e59-9f1b-0f0e7c3c6a11' };
type Problem = paths['/v1/projects/{project_id}']['get']['responses'][404]['content']['application/problem+json'];
declare const problem: Problem;
export const code: string = problem.code;
export const requestId: string = problem.request_id;

// GET /v1/projects?limit=&cursor=
type ListQuery = NonNullable<paths['/v1/projects']['get']['parameters']['query']>;
export const query: ListQuery = { limit: 10, cursor: 'abc' };
type Page = Json<paths['/v1/projects']['get']['responses'][200]>;
declare const page: Page;
export const next: string | null = page.next_cursor;
export const names: string[] = page.data.map((project) => project.name);

// POST /v1/tokens (the secret is in the minting response only)
type Mint = Json<paths['/v1/tokens']['post']['requestBody']>;
export const mint: Mint = { abilities: ['team:view', 'project:view-any'], name: 'ci' };
type Minted = Json<paths['/v1/tokens']['post']['responses'][201]>;
declare const minted: Minted;
export const bearer: string = minted.token;
type Listed = Json<paths['/v1/tokens']['get']['responses'][200]>['data'][number];
declare const listed: Listed;
// @ts-expect-error listed tokens never carry the secret
export const leaked: string = listed.token;

// POST /v1/webhook-deliveries/replay-dead
type Replay = Json<paths['/v1/webhook-deliveries/replay-dead']['post']['requestBody']>;
export const replay: Replay = { since_hours: 24 };
// @ts-expect-error since_hours is a number
export const replayText: Replay = { since_hours: '24' };
type Replayed = Json<paths['/v1/webhook-deliveries/replay-dead']['post']['responses'][202]>;
declare const replayed: Replayed;
export const count: number = replayed.replayed;

// POST /v1/webhook-endpoints
type Endpoint = Json<paths['/v1/webhook-endpoints']['post']['requestBody']>;
export const endpoint: Endpoint = { name: 'hooks', url: 'https://example.com/hooks', events: ['subscription.created'] };
type Scopes = paths['/v1/teams/current']['get'] extends { responses: { 200: unknown } } ? true : false;
export const hasTeam: Scopes = true;
`,
    );
    writeFileSync(
      join(directory, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          noEmit: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          skipLibCheck: true,
          types: [],
          lib: ['ES2022'],
        },
        files: ['api.ts', 'client.ts'],
      }),
    );
    const result = await run(process.execPath, [TSC, '-p', join(directory, 'tsconfig.json')], { cwd: directory }).then(
      () => ({ code: 0, output: '' }),
      (error: { code: number; stdout: string; stderr: string }) => ({
        code: error.code,
        output: `${error.stdout}${error.stderr}`,
      }),
    );
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });
});
