import { expect } from 'vitest';
import { NOT_FOUND, defineIsolationCases, idsOf } from './cases.js';

const newEndpoint = { name: 'A hook', url: 'https://a.example/hooks', events: ['project.created'] };

export default defineIsolationCases({
  operations: {
    createWebhookEndpoint: {
      foreign: { input: () => newEndpoint, expect: { ok: (body) => expect(body.secret).toMatch(/^whsec_/) } },
    },
    listWebhookEndpoints: {
      foreign: {
        input: () => ({}),
        expect: { ok: (body, _status, w) => expect(idsOf(body)).toContain(w.a.endpoint.id) },
      },
    },
    getWebhookEndpoint: { foreign: { input: (w) => ({ id: w.b.endpoint.id }), expect: NOT_FOUND } },
    updateWebhookEndpoint: {
      foreign: { input: (w) => ({ id: w.b.endpoint.id, url: 'https://attacker.example/steal' }), expect: NOT_FOUND },
    },
    deleteWebhookEndpoint: { foreign: { input: (w) => ({ id: w.b.endpoint.id }), expect: NOT_FOUND } },
    rotateWebhookEndpointSecret: { foreign: { input: (w) => ({ id: w.b.endpoint.id }), expect: NOT_FOUND } },
    sendTestWebhookEvent: { foreign: { input: (w) => ({ id: w.b.endpoint.id }), expect: NOT_FOUND } },
  },
});
