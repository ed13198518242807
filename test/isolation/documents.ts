import { expect } from 'vitest';
import { defineIsolationCases } from './cases.js';

const served = { ok: (_body: unknown, status: number) => expect(status).toBe(200) };

export default defineIsolationCases({
  operations: {
    getOpenApiDocument: {
      foreign: { input: () => ({}), expect: served },
      scoped: { input: () => ({}), expect: served },
    },
    getWebhookEventsDocument: {
      foreign: { input: () => ({}), expect: served },
      scoped: { input: () => ({}), expect: served },
    },
  },
});
