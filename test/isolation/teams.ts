import { expect } from 'vitest';
import { defineIsolationCases } from './cases.js';

export default defineIsolationCases({
  operations: {
    getCurrentTeam: {
      foreign: { input: () => ({}), expect: { ok: (body, _status, w) => expect(body.id).toBe(w.a.team.id) } },
    },
    // Renaming to its own name changes nothing, and answers team A whatever is sent.
    updateCurrentTeam: {
      foreign: {
        input: (w) => ({ name: w.a.team.name }),
        expect: { ok: (body, _status, w) => expect(body.id).toBe(w.a.team.id) },
      },
    },
    // Another team's id never confirms a deletion (the team comes from the token); team A is not deleted.
    deleteCurrentTeam: {
      foreign: { input: (w) => ({ confirm_team_id: w.b.team.id }), expect: { code: 'VALIDATION_FAILED' } },
    },
  },
});
