import { expect } from 'vitest';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

export default defineIsolationCases({
  operations: {
    listWebhookDeliveries: {
      foreign: {
        input: (w) => ({ endpoint_id: w.b.endpoint.id }),
        expect: { ok: (body) => expect(body.data).toEqual([]) },
      },
    },
    getWebhookDelivery: { foreign: { input: (w) => ({ id: w.b.deliveryId }), expect: NOT_FOUND } },
    retryWebhookDelivery: { foreign: { input: (w) => ({ id: w.b.deliveryId }), expect: NOT_FOUND } },
    // A's job sees none of B's dead deliveries, even aimed at B's endpoint.
    replayDeadWebhookDeliveries: {
      foreign: {
        input: (w) => ({ since_hours: 720, endpoint_id: w.b.endpoint.id, status: 'dead' }),
        expect: { ok: (body) => expect(body).toMatchObject({ matched: 0, replayed: 0, status: 'completed' }) },
      },
    },
  },
});
