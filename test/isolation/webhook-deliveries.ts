import { expect } from 'vitest';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

export default defineIsolationCases({
  operations: {
    listWebhookDeliveries: { foreign: { input: (w) => ({ endpoint_id: w.b.endpoint.id }), expect: { ok: (body) => expect(body.data).toEqual([]) } } },
    getWebhookDelivery: { foreign: { input: (w) => ({ id: w.b.deliveryId }), expect: NOT_FOUND } },
    retryWebhookDelivery: { foreign: { input: (w) => ({ id: w.b.deliveryId }), expect: NOT_FOUND } },
    replayDeadWebhookDeliveries: { foreign: { input: () => ({ since_hours: 720 }), expect: { ok: (body) => expect(body).toEqual({ replayed: 0 }) } } },
  },
});
