import type { Clock } from '../clock.js';
import { isoTime } from '../clock.js';
import { ProblemError } from '../errors.js';
import { keys } from './keys.js';
import { ConditionFailedError, type Store } from './store.js';

/**
 * The dashboard sessions' write the domain makes (DESIGN D21, D35): a member's own session revoked. The sign-in flows
 * that create sessions keep theirs in `shared/dashboard/sessions.ts`.
 */
export const dashboardSessionStore = {
  /**
   * Revokes session `sessionId` of member `memberId` of `teamId` (one conditional UpdateItem; revoking twice keeps
   * the first time). A session of anyone else, or none: NOT_FOUND.
   */
  async revoke(store: Store, clock: Clock, session: { teamId: string; memberId: string; sessionId: string }) {
    try {
      await store.update({
        Key: keys.dashboardSession(session.sessionId),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(pk) AND team_id = :team AND member_id = :member',
        ExpressionAttributeValues: {
          ':now': isoTime(clock.nowMs()),
          ':team': session.teamId,
          ':member': session.memberId,
        },
      });
    } catch (error) {
      if (error instanceof ConditionFailedError)
        throw new ProblemError('NOT_FOUND', `No session ${session.sessionId}.`);
      throw error;
    }
  },
};
