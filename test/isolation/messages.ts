import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { createBroadcast } from '../../shared/domain/messages/broadcasts.js';
import { CreateBroadcastRequest } from '../../shared/domain/messages/broadcast-schema.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A broadcast request any project can take. */
const broadcast = { audience: { statuses: ['active'] }, subject: 'Hijacked', body: 'Hijacked {{ project.name }}' };

export default defineIsolationCases({
  seed: async (runtime, w) => ({
    subscriberId: (
      await createSubscriber(runtime, w.b.principal, w.b.project.id, { display_name: 'Secret fan', consent: false })
    ).id,
    broadcastId: (
      await createBroadcast(runtime, w.b.principal, w.b.project.id, CreateBroadcastRequest.parse(broadcast))
    ).id,
  }),
  secretsOfB: (extra) => [extra.subscriberId, extra.broadcastId],
  operations: {
    listMessages: {
      foreign: {
        input: (w, extra) => ({ project_id: w.b.project.id, subscriber_id: extra.subscriberId }),
        expect: NOT_FOUND,
      },
    },
    createBroadcast: { foreign: { input: (w) => ({ project_id: w.b.project.id, ...broadcast }), expect: NOT_FOUND } },
    listBroadcasts: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    getBroadcast: {
      foreign: { input: (w, extra) => ({ project_id: w.b.project.id, id: extra.broadcastId }), expect: NOT_FOUND },
    },
  },
});
