import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { createBroadcast } from '../../shared/domain/messages/broadcasts.js';
import { CreateBroadcastRequest } from '../../shared/domain/messages/broadcast-schema.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A broadcast request any project can take. */
const broadcast = { audience: { statuses: ['active'] }, subject: 'Hijacked', body: 'Hijacked {{ project.name }}' };

/**
 * The message log and broadcasts (DESIGN D32): team A's token asking for a subscriber or a broadcast of team B (in B's
 * project, or a subscriber of B named under A's own project) is NOT_FOUND, and the project-scoped token gets NOT_FOUND
 * for A's other project.
 */
export default defineIsolationCases<{ subscriberOfB: string; subscriberOfOtherProject: string; broadcastId: string }>({
  seed: async (runtime, w) => ({
    subscriberOfB: (
      await createSubscriber(runtime, w.b.principal, w.b.project.id, { display_name: 'B reader', consent: false })
    ).id,
    subscriberOfOtherProject: (
      await createSubscriber(runtime, w.a.principal, w.a.otherProject.id, { display_name: 'A2 reader', consent: false })
    ).id,
    broadcastId: (
      await createBroadcast(runtime, w.b.principal, w.b.project.id, CreateBroadcastRequest.parse(broadcast))
    ).id,
  }),
  secretsOfB: (extra) => [extra.subscriberOfB, extra.broadcastId],
  operations: {
    listMessages: {
      foreign: {
        input: (w, extra) => ({ project_id: w.a.project.id, subscriber_id: extra.subscriberOfB }),
        expect: NOT_FOUND,
      },
      scoped: {
        input: (w, extra) => ({ project_id: w.a.otherProject.id, subscriber_id: extra.subscriberOfOtherProject }),
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
