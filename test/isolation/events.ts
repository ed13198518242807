import { expect } from 'vitest';
import { listEventEnvelopes } from '../../shared/domain/events/repository.js';
import { ListEventsQuery } from '../../shared/domain/events/schema.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** Team B's newest event (its project's or team's creation). */
export default defineIsolationCases<{ eventId: string }>({
  seed: async (runtime, w) => ({
    eventId: (await listEventEnvelopes(runtime, w.b.principal, ListEventsQuery.parse({ limit: 1 }))).data[0].id,
  }),
  secretsOfB: (extra) => [extra.eventId],
  operations: {
    listEvents: {
      foreign: {
        input: (w) => ({ project_id: w.b.project.id }),
        expect: { ok: (body) => expect(body.data).toEqual([]) },
      },
    },
    getEvent: { foreign: { input: (_w, extra) => ({ id: extra.eventId }), expect: NOT_FOUND } },
    resendEvent: {
      foreign: { input: (w, extra) => ({ id: extra.eventId, endpoint_id: w.b.endpoint.id }), expect: NOT_FOUND },
    },
  },
});
