import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root (cdk.json, cdk.out/). */
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Gives the infrastructure project's run one directory under `cdk.out/` for its syntheses (STUB_SYNTHESIS_ROOT, read by
 * test/infrastructure/templates.ts) and removes it when the run ends: the syntheses are shared by the files of a
 * worker, so no file may remove them.
 */
export function setup(): () => void {
  mkdirSync(path.join(PROJECT_ROOT, 'cdk.out'), { recursive: true });
  const root = mkdtempSync(path.join(PROJECT_ROOT, 'cdk.out', 'test-run-'));
  process.env.STUB_SYNTHESIS_ROOT = root;
  return () => rmSync(root, { recursive: true, force: true });
}
