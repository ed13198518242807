import { expect } from 'vitest';
import { defineIsolationCases } from './cases.js';

export default defineIsolationCases({
  operations: {
    getCurrentTeam: { foreign: { input: () => ({}), expect: { ok: (body, _status, w) => expect(body.id).toBe(w.a.team.id) } } },
  },
});
