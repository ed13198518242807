import { ReplayDeadRequest } from '../../shared/domain/webhook-deliveries/schema.js';
import { createReplayJob } from '../../shared/domain/webhook-replays/repository.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** Team B's replay job (a dry run: it reads B's dead deliveries and re-queues nothing). */
export default defineIsolationCases<{ replayId: string }>({
  seed: async (runtime, w) => ({
    replayId: (
      await createReplayJob(runtime, w.b.principal, ReplayDeadRequest.parse({ since_hours: 720, dry_run: true }))
    ).id,
  }),
  secretsOfB: (extra) => [extra.replayId],
  operations: {
    getWebhookReplay: { foreign: { input: (_w, extra) => ({ id: extra.replayId }), expect: NOT_FOUND } },
    cancelWebhookReplay: { foreign: { input: (_w, extra) => ({ id: extra.replayId }), expect: NOT_FOUND } },
  },
});
