import { expect } from 'vitest';
import { defineIsolationCases } from './cases.js';

export default defineIsolationCases({
  operations: {
    listActivity: {
      foreign: {
        input: (w) => ({ token_id: w.b.principal.tokenId }),
        expect: { ok: (body) => expect(body.data).toEqual([]) },
      },
    },
  },
});
