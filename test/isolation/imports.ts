import { randomUUID } from 'node:crypto';
import { isoTime } from '../../shared/clock.js';
import { zeroCounts, type StoredImport } from '../../shared/domain/imports/record.js';
import type { Runtime } from '../../shared/runtime.js';
import { importStore } from '../../shared/store/imports.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** An import job of team B's project, stored as `POST …/imports` stores one (no Stripe connection needed). */
async function seedImport(runtime: Runtime, teamId: string, projectId: string): Promise<string> {
  const nowMs = runtime.clock.nowMs();
  const job: StoredImport = {
    id: randomUUID(),
    team_id: teamId,
    project_id: projectId,
    dry_run: true,
    status: 'succeeded',
    plan_mapping: {},
    kind: null,
    starting_after: null,
    pages: 3,
    skipped: [],
    error: null,
    created_at: isoTime(nowMs),
    updated_at: isoTime(nowMs),
    completed_at: isoTime(nowMs),
    ...zeroCounts(),
  };
  await importStore.create(runtime.store, job, nowMs);
  return job.id;
}

export default defineIsolationCases<{ importOfB: string }>({
  seed: async (runtime, w) => ({ importOfB: await seedImport(runtime, w.b.team.id, w.b.project.id) }),
  secretsOfB: (extra) => [extra.importOfB],
  operations: {
    createImport: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, source: 'stripe', dry_run: true }), expect: NOT_FOUND },
    },
    listImports: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    getImport: {
      foreign: { input: (w, extra) => ({ project_id: w.b.project.id, import_id: extra.importOfB }), expect: NOT_FOUND },
    },
  },
});
