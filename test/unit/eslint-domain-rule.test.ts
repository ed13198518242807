/**
 * DynamoDB lives only under `shared/store/` (DESIGN D14, D35): ESLint's rules refuse DynamoDB expressions, request keys
 * and AWS SDK imports everywhere else the service's code lives — the domain, the surfaces, the jobs, the Lambda
 * handlers, the CLI — and a Store call in a surface module. The rules are read from the project's own config for each
 * path and run on a fixture that does each of these, and on a module in domain terms that must pass.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The line numbers ESLint reports for `code` as the module at `path`, under the rules the project's config applies
 * there (type-aware rules left out: the fixture is no project file).
 */
async function refusedLines(code: string, path: string): Promise<number[]> {
  const filePath = join(ROOT, path);
  const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(filePath)) as {
    rules: Record<string, unknown>;
  };
  const rules = {
    'no-restricted-imports': config.rules['no-restricted-imports'] ?? 'off',
    'no-restricted-syntax': config.rules['no-restricted-syntax'] ?? 'off',
  };
  const linter = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules } as never],
  });
  const [result] = await linter.lintText(code, { filePath });
  return [...new Set(result.messages.map((message) => message.line))];
}

const fixture = () => readFile(join(ROOT, 'test/fixtures/domain-with-dynamodb.ts.fixture'), 'utf8');
const markedLines = (code: string) =>
  code.split('\n').flatMap((line, index) => (line.includes('// refused:') ? [index + 1] : []));
/** The fixture's line that calls a Store method (refused in surface modules only). */
const storeCallLine = (code: string) => code.split('\n').findIndex((line) => line.includes('store.update(')) + 1;

describe('the DynamoDB rule of eslint.config.js', () => {
  it.each([
    'shared/domain/plans/fixture.ts',
    'shared/limits/fixture.ts',
    'shared/deadlines/fixture.ts',
    'bin/fixture.ts',
  ])('refuses every DynamoDB expression, request key and AWS SDK import of the fixture in %s', async (path) => {
    const code = await fixture();
    expect(markedLines(code).length).toBe(6);
    expect(await refusedLines(code, path)).toEqual(markedLines(code));
  });

  it.each([
    'shared/dashboard/fixture.ts',
    'shared/oauth/fixture.ts',
    'shared/mcp/fixture.ts',
    'shared/hooks/fixture.ts',
    'functions/fixture.ts',
  ])('refuses them and the Store call in the surface module %s', async (path) => {
    const code = await fixture();
    expect(await refusedLines(code, path)).toEqual([...markedLines(code), storeCallLine(code)].sort((a, b) => a - b));
  });

  it('lets a store adapter speak DynamoDB', async () => {
    expect(await refusedLines(await fixture(), 'shared/store/fixture.ts')).toEqual([]);
  });

  it('lets a module in domain terms pass', async () => {
    const code = [
      "import { planStore } from '../../store/plans.js';",
      'export async function renamePlan(store: Parameters<typeof planStore.rename>[0], id: string, name: string) {',
      "  const note = 'SETTINGS are named in domain terms';",
      '  return planStore.rename(store, id, { name, note });',
      '}',
    ].join('\n');
    expect(await refusedLines(code, 'shared/domain/plans/fixture.ts')).toEqual([]);
  });
});
