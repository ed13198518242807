import { expect } from 'vitest';
import { NOT_FOUND, defineIsolationCases, idsOf } from './cases.js';

export default defineIsolationCases({
  operations: {
    createToken: {
      foreign: { input: (w) => ({ abilities: ['project:view'], project_ids: [w.b.project.id] }), expect: NOT_FOUND },
      scoped: {
        input: (w) => ({ abilities: ['project:view'], project_ids: [w.a.otherProject.id] }),
        expect: { code: 'TOKEN_MISSING_ABILITY' },
      },
    },
    listTokens: {
      foreign: {
        input: () => ({ limit: 100, include_revoked: true }),
        expect: { ok: (body, _status, w) => expect(idsOf(body)).toContain(w.a.principal.tokenId) },
      },
    },
    revokeToken: { foreign: { input: (w) => ({ id: w.b.spare.id }), expect: NOT_FOUND } },
  },
});
