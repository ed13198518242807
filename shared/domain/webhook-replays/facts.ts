import { defineFacts } from '../define-facts.js';

/**
 * Replay jobs' keys (DESIGN D25): a job in its team's partition, and the sparse GSI partition of jobs still running
 * (the sweeper restarts a stalled one).
 */
export const webhookReplaysFacts = defineFacts({
  keys: {
    webhookReplay: (teamId: string, replayId: string) => ({ pk: `TEAM#${teamId}`, sk: `WEBHOOK_REPLAY#${replayId}` }),
    runningReplaysIndex: 'WEBHOOK_REPLAY_RUNNING',
  },
  entity: { webhookReplay: 'webhook_replay' },
});
