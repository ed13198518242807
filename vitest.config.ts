import { register } from 'tsx/esm/api';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { ProjectTimings } from './test/project-timings.js';

/**
 * Tests run on Node's own module loader with tsx's hooks (`--import tsx`, as `npm start` and the CLI run), not on
 * Vite's module runner: the code under test is imported as Node imports it, without a transform per worker or wrapped
 * module bindings, so a run spends less CPU on imports and calls. This process (the global setups) registers the same
 * hooks. Vite-only features (`import.meta.glob`, `vi.resetModules`) are not available to tests.
 */
register();

/**
 * Six projects (DESIGN D31, §6); `npm test` runs them all, `npm run test:<project>` one of them:
 * - `unit`: pure logic and adapters with mocked AWS clients; no DynamoDB Local, no server (the edit-test loop);
 * - `infrastructure`: CDK assertions on syntheses with stub bundles (no store; CPU-bound), one module graph per worker
 *   so that files asking for the same context share a synthesis (test/infrastructure/templates.ts);
 * - `infrastructure-bundles`: the synthesis with every entry bundled by esbuild, alone in its module graph (it mocks
 *   esbuild to count its builds);
 * - `integration`: use cases and pipelines against DynamoDB Local;
 * - `e2e`: the local server (in-process or as `npm start`) driven by real clients;
 * - `browser`: the dashboard, the public pages and the OAuth consent of an MCP client, in headless Chromium.
 *
 * Only the projects that need a store get test/global-setup.ts, which starts ONE DynamoDB Local for the whole
 * run (a second project's setup finds DYNAMODB_ENDPOINT set and reuses it) and hands its endpoint to the tests
 * through DYNAMODB_ENDPOINT; each test file uses its own table names and deletes them afterwards
 * (test/setup-file.ts). No test may reach the internet: a runtime without its own integration settings (the
 * environment's) sends Stripe and Telegram calls to a closed loopback port, refused at once; tests that call
 * them start loopback fakes.
 */
const STORE = { globalSetup: ['test/global-setup.ts'], setupFiles: ['test/setup-file.ts'] };

/**
 * The files that took longest in full runs on the 2-core CI machine, longest first. A clean clone has no
 * timings of earlier runs, so vitest would order files by size and start some of these last, leaving one
 * worker idle while the other finishes them; started first, the many short files fill the end of the run.
 * A stale entry only changes the order.
 */
const LONGEST_FILES = [
  'test/infrastructure/stack-bundles.test.ts',
  'test/integration/fuzz.test.ts',
  'test/e2e/openapi-property.test.ts',
  'test/e2e/npm-start.test.ts',
  'test/integration/demo-data.test.ts',
  'test/e2e/dashboard-membership.test.ts',
  'test/integration/billing-lockdown.test.ts',
  'test/e2e/subscription-lifecycle-events.test.ts',
  'test/e2e/dashboard.test.ts',
  'test/e2e/dashboard-membership-accounts.test.ts',
  'test/e2e/webhook-pipeline.test.ts',
  'test/infrastructure/scale.test.ts',
  'test/integration/access-codes-generation.test.ts',
  'test/integration/metrics-recount.test.ts',
  'test/infrastructure/billing-webhook-secret.test.ts',
  'test/infrastructure/operations.test.ts',
  'test/e2e/walking-skeleton.test.ts',
  'test/e2e/docs-commands.test.ts',
  'test/e2e/dashboard-home.test.ts',
  'test/e2e/dashboard-projects.test.ts',
];

/**
 * The projects in the order their files run. A worker of `isolate: false` is kept for the next file only when the
 * next file in the queue belongs to the same project (vitest's pool); otherwise it is stopped and the next file starts
 * a new process, which imports the module graph again (seconds of CPU each). Files of one project in a row keep the
 * workers: the bundles' single long file first, the end-to-end and browser files with most of the other long ones,
 * and the short unit files last, where they fill the end of the run.
 */
const PROJECT_ORDER = ['infrastructure-bundles', 'e2e', 'browser', 'infrastructure', 'integration', 'unit'];

/**
 * Vitest's order (earlier failures and durations first when it has them, else larger files first), grouped by project
 * in {@link PROJECT_ORDER}, {@link LONGEST_FILES} ahead within each project.
 */
class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FILES.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return index === -1 ? LONGEST_FILES.length : index;
    };
    const projectRank = (file: TestSpecification) => {
      const index = PROJECT_ORDER.indexOf(file.project.name);
      return index === -1 ? PROJECT_ORDER.length : index;
    };
    const sorted = await super.sort(files);
    return sorted
      .map((file, position) => ({ file, position, project: projectRank(file), rank: rank(file) }))
      .sort((a, b) => a.project - b.project || a.rank - b.rank || a.position - b.position)
      .map(({ file }) => file);
  }
}

export default defineConfig({
  test: {
    // Generous: on a 2-core machine one DynamoDB Local (a full core) serves two workers, and a test that
    // takes 2 s alone can take many times that late in a full run on a shared machine.
    testTimeout: 180_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // One module graph per worker: each file's own state lives in its module, every file uses its own tables
    // and ids, and spies are restored after each test. The bundles' project stays isolated (it mocks esbuild).
    isolate: false,
    restoreMocks: true,
    maxWorkers: 2,
    experimental: { viteModuleRunner: false },
    execArgv: ['--import', 'tsx'],
    // The default output, then a line per project with its time (test/project-timings.ts).
    reporters: ['default', new ProjectTimings()],
    sequence: { sequencer: LongestFirstSequencer },
    env: { STRIPE_API_BASE_URL: 'http://127.0.0.1:9', TELEGRAM_API_ROOT: 'http://127.0.0.1:9' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      {
        extends: true,
        test: {
          name: 'infrastructure',
          include: ['test/infrastructure/**/*.test.ts'],
          exclude: ['test/infrastructure/stack-bundles.test.ts'],
          globalSetup: ['test/infrastructure/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: { name: 'infrastructure-bundles', include: ['test/infrastructure/stack-bundles.test.ts'], isolate: true },
      },
      { extends: true, test: { name: 'integration', include: ['test/integration/**/*.test.ts'], ...STORE } },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: ['test/e2e/dashboard*.test.ts', 'test/e2e/join-portal.test.ts', 'test/e2e/mcp-oauth.test.ts'],
          ...STORE,
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/e2e/dashboard*.test.ts', 'test/e2e/join-portal.test.ts', 'test/e2e/mcp-oauth.test.ts'],
          ...STORE,
        },
      },
    ],
  },
});
