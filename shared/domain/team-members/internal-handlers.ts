import { ProblemError } from '../../errors.js';
import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { dashboardSessionStore } from '../../store/dashboard-sessions.js';
import { ensureTeamOwner } from './changes.js';
import type { teamMembersModule } from './operations.js';
import { createSignInLinkHandler, registerPasskey, signInWithLink, signInWithPasskey } from './sign-in-handlers.js';

type Operations = NonNullable<typeof teamMembersModule.internal>;

/**
 * Revokes one of the calling member's dashboard sessions (D21). Errors: NOT_FOUND (not theirs, none, or a caller that
 * is not a team member).
 */
const revokeDashboardSession: OperationHandler<Operations['revokeDashboardSession']> = async (
  input,
  { runtime, principal },
) => {
  if (!principal.memberId) throw new ProblemError('NOT_FOUND', `No session ${input.session_id}.`);
  await dashboardSessionStore.revoke(runtime.store, runtime.clock, {
    teamId: principal.teamId,
    memberId: principal.memberId,
    sessionId: input.session_id,
  });
  return { revoked: true as const };
};

/** Every handler of the team members module's internal operations. */
export const teamMembersInternalHandlers = {
  signInWithLink,
  signInWithPasskey,
  registerPasskey,
  revokeDashboardSession,
  createSignInLink: createSignInLinkHandler,
  addTeamOwner: async (input, { runtime, principal }) => ensureTeamOwner(runtime, principal.teamId, input),
} satisfies InternalHandlersOf<typeof teamMembersModule>;
