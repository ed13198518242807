import { ProblemError } from '../../errors.js';
import type { OperationHandler } from '../../operations/handler.js';
import type { Runtime } from '../../runtime.js';
import { acceptTeamInvitation } from './handlers.js';
import type { teamMembersModule } from './operations.js';
import { finishPasskeyRegistration, finishPasskeySignIn, type RelyingParty } from './passkeys.js';
import { findMember } from './records.js';
import type { AcceptedTeamInvitation } from './schema.js';
import { dashboardSessionStore } from '../../store/dashboard-sessions.js';
import { consumeSignInLink, createSession, createSignInLink } from './sessions.js';

type Operations = NonNullable<typeof teamMembersModule.internal>;
type Module = typeof teamMembersModule.operations;

/** The relying party of an operation's input (`relying_party`, derived by the surface from the request's host). */
const relyingPartyOf = (input: { origin: string; rp_id: string }): RelyingParty => ({
  origin: input.origin,
  rpId: input.rp_id,
});

/** Starts a session (D21) and answers it as the sign-in operations do: its id, state and the cookie's value. */
async function startSession(runtime: Runtime, session: Parameters<typeof createSession>[2]) {
  const { session: started, cookieValue } = await createSession(runtime.store, runtime.clock, session);
  return { session_id: started.id, state: started.state, session_cookie: cookieValue };
}

/**
 * Uses a one-time sign-in link (D21) and starts a session that must register a passkey. The link's team gets the
 * entry, a refusal after its secret was verified included (expired, or its member removed). Errors: NOT_FOUND.
 */
export const signInWithLink: OperationHandler<Operations['signInWithLink']> = async (input, { runtime, identify }) => {
  const { teamId, memberId } = await consumeSignInLink(runtime.store, runtime.clock, input.token, (owner) =>
    identify?.(owner),
  );
  return startSession(runtime, {
    teamId,
    memberId,
    state: 'registration',
    method: 'link',
    userAgent: input.user_agent,
  });
};

/**
 * Verifies a passkey's assertion (D21) and starts an active session for its member. Errors: AUTHENTICATION_REQUIRED
 * (one answer for every failed verification; a member no longer active, in their team's log).
 */
export const signInWithPasskey: OperationHandler<Operations['signInWithPasskey']> = async (
  input,
  { runtime, identify },
) => {
  const { teamId, memberId } = await finishPasskeySignIn(
    runtime.store,
    runtime.clock,
    relyingPartyOf(input.relying_party),
    { challengeId: input.challenge_id, response: input.response as never },
  );
  identify?.({ teamId, memberId });
  const member = await findMember(runtime.store, teamId, memberId);
  if (!member || member.status !== 'active')
    throw new ProblemError('AUTHENTICATION_REQUIRED', 'This passkey’s team member is no longer active.');
  return startSession(runtime, { teamId, memberId, state: 'active', method: 'passkey', userAgent: input.user_agent });
};

/**
 * Stores the calling member's new passkey from the attestation answering their session's challenge, then makes that
 * session active (D21). Errors: AUTHENTICATION_REQUIRED (challenge or attestation not verified), CONFLICT (registered
 * already), NOT_FOUND (a caller that is not a team member, or a session not theirs).
 */
export const registerPasskey: OperationHandler<Operations['registerPasskey']> = async (
  input,
  { runtime, principal },
) => {
  if (!principal.memberId) throw new ProblemError('NOT_FOUND', `No session ${input.session_id}.`);
  const session = { teamId: principal.teamId, memberId: principal.memberId, sessionId: input.session_id };
  const passkey = await finishPasskeyRegistration(runtime.store, runtime.clock, relyingPartyOf(input.relying_party), {
    ...session,
    challengeId: input.challenge_id,
    response: input.response as never,
  });
  await dashboardSessionStore.activate(runtime.store, session);
  return { registered: true as const, created_at: passkey.created_at };
};

/** A sign-in link for the caller's team member with `email` (D21). Errors: NOT_FOUND (no such member), CONFLICT. */
export const createSignInLinkHandler: OperationHandler<Operations['createSignInLink']> = async (
  input,
  { runtime, principal },
) => createSignInLink(runtime.store, runtime.clock, principal.teamId, input.email);

/**
 * The dashboard's handler of `acceptTeamInvitation` for a browser of `userAgent` (D21): the operation's, then the
 * member's first session, which must register a passkey (an invitation is their first sign-in link). The answer adds
 * the session cookie's value to the operation's.
 */
export function acceptTeamInvitationAndSignIn(userAgent: string | undefined) {
  const handler: (
    ...call: Parameters<OperationHandler<Module['acceptTeamInvitation']>>
  ) => Promise<AcceptedTeamInvitation & { session_cookie: string }> = async (input, context) => {
    const accepted = await acceptTeamInvitation(input, context);
    const { session_cookie } = await startSession(context.runtime, {
      teamId: accepted.team.id,
      memberId: accepted.team_member.id,
      state: 'registration',
      method: 'link',
      userAgent,
    });
    return { ...accepted, session_cookie };
  };
  return handler;
}
