import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/**
 * The message log (DESIGN D32): team A's token asking for a subscriber of team B (in B's project, or named under A's
 * own project) is NOT_FOUND, and the project-scoped token gets NOT_FOUND for A's other project.
 */
export default defineIsolationCases<{ subscriberOfB: string; subscriberOfOtherProject: string }>({
  seed: async (runtime, w) => ({
    subscriberOfB: (
      await createSubscriber(runtime, w.b.principal, w.b.project.id, { display_name: 'B reader', consent: false })
    ).id,
    subscriberOfOtherProject: (
      await createSubscriber(runtime, w.a.principal, w.a.otherProject.id, { display_name: 'A2 reader', consent: false })
    ).id,
  }),
  secretsOfB: (extra) => [extra.subscriberOfB],
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
  },
});
