import { expect } from 'vitest';
import { NOT_FOUND, defineIsolationCases, idsOf } from './cases.js';

export default defineIsolationCases({
  operations: {
    createProject: {
      foreign: { input: () => ({ name: 'Made by A', platform_type: 'discord' }), expect: { ok: (body) => expect(body.name).toBe('Made by A') } },
      scoped: { input: () => ({ name: 'Scoped', platform_type: 'discord' }), expect: { code: 'TOKEN_MISSING_ABILITY' } },
    },
    listProjects: {
      foreign: { input: () => ({ limit: 100 }), expect: { ok: (body, _status, w) => expect(idsOf(body)).not.toContain(w.b.project.id) } },
      scoped: { input: () => ({ limit: 100 }), expect: { ok: (body, _status, w) => expect(idsOf(body)).toEqual([w.a.project.id]) } },
    },
    getProject: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
  },
});

