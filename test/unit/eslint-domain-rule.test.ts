/**
 * The domain speaks in its own terms (DESIGN D14, D35): ESLint's rule for `shared/domain` refuses DynamoDB
 * expressions, request keys and AWS SDK imports. The rule is read from the project's own config for a domain path
 * and run on a fixture that does each of these, and on a module in domain terms that must pass.
 */
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const DOMAIN_FILE = join(ROOT, 'shared/domain/plans/fixture.ts');
let linter: ESLint;

beforeAll(async () => {
  // The rules the project's config applies to a domain module (type-aware rules left out: the fixture is no project
  // file).
  const config = (await new ESLint({ cwd: ROOT }).calculateConfigForFile(DOMAIN_FILE)) as {
    rules: Record<string, unknown>;
  };
  const rules = {
    'no-restricted-imports': config.rules['no-restricted-imports'],
    'no-restricted-syntax': config.rules['no-restricted-syntax'],
  };
  linter = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules } as never],
  });
}, 60_000);

/** The line numbers ESLint reports for `code` as a domain module. */
async function refusedLines(code: string): Promise<number[]> {
  const [result] = await linter.lintText(code, { filePath: DOMAIN_FILE });
  return [...new Set(result.messages.map((message) => message.line))];
}

describe('the domain rule of eslint.config.js', () => {
  it('refuses every DynamoDB expression, request key and AWS SDK import of the fixture', async () => {
    const fixture = await readFile(join(ROOT, 'test/fixtures/domain-with-dynamodb.ts.fixture'), 'utf8');
    const marked = fixture.split('\n').flatMap((line, index) => (line.includes('// refused:') ? [index + 1] : []));
    expect(marked.length).toBe(6);
    expect(await refusedLines(fixture)).toEqual(marked);
  });

  it('lets a module in domain terms pass', async () => {
    const code = [
      "import { planStore } from '../../store/plans.js';",
      'export async function renamePlan(store: Parameters<typeof planStore.rename>[0], id: string, name: string) {',
      "  const note = 'SETTINGS are named in domain terms';",
      '  return planStore.rename(store, id, { name, note });',
      '}',
    ].join('\n');
    expect(await refusedLines(code)).toEqual([]);
  });
});
