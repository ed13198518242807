/** @jsx h */
/** @jsxFrag Fragment */
import { ProblemError, toProblem, type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { Notice, ProblemView } from '../components.js';
import { Page, PublicPage } from '../layout.js';
import { h } from '../../web/html.js';
import {
  clearedSessionCookie,
  doubleSubmitToken,
  htmlResult,
  jsonResult,
  PRESESSION_CSRF_COOKIE,
  redirectResult,
  safeReturnPath,
  sessionCookie,
  type DashboardRequest,
  type SignedInRequest,
} from '../http.js';
import {
  finishPasskeyRegistration,
  finishPasskeySignIn,
  listPasskeys,
  startPasskeyRegistration,
  startPasskeySignIn,
} from '../../domain/team-members/passkeys.js';
import type { AcceptedTeamInvitation } from '../../domain/team-members/schema.js';
import { findMember } from '../../domain/team-members/records.js';
import { acceptTeamInvitation } from '../../domain/team-members/handlers.js';
import { teamMembersInternalHandlers } from '../../domain/team-members/internal-handlers.js';
import { pageOperations } from './kit.js';
import { consumeSignInLink, createSession } from '../../domain/team-members/sessions.js';
import { dashboardSessionStore } from '../../store/dashboard-sessions.js';

const { runPublic, write } = pageOperations({
  acceptTeamInvitation,
  revokeDashboardSession: teamMembersInternalHandlers.revokeDashboardSession,
});

/**
 * Signing in and out of the dashboard (DESIGN D21): the sign-in page (passkey), one-time sign-in links,
 * invitation acceptance, passkey registration, the member's sessions and passkeys, sign-out.
 */

function problemPage(title: string, error: unknown, requestId: string): ApiGatewayResult {
  return problemDocumentPage(title, toProblem(error, requestId).problem);
}

function problemDocumentPage(title: string, problem: ProblemDocument): ApiGatewayResult {
  return htmlResult(
    problem.status,
    <PublicPage title={title}>
      <ProblemView problem={problem} />
      <p>
        <a href="/dashboard/sign-in">Back to sign-in</a>
      </p>
    </PublicPage>,
  );
}

/**
 * `GET /dashboard/sign-in[?return_to=/dashboard/...]`: sign in with a passkey, then go to `return_to` when it is a safe
 * dashboard path.
 */
export async function signInPage(request: DashboardRequest): Promise<ApiGatewayResult> {
  return htmlResult(
    200,
    <PublicPage title="Sign in">
      {request.query.get('signed_out') ? <Notice>You are signed out.</Notice> : ''}
      <div class="card">
        <p>Sign in with the passkey you registered on this device or your phone.</p>
        <button
          type="button"
          id="passkey-sign-in"
          data-return-to={safeReturnPath(request.query.get('return_to')) ?? '/dashboard'}
        >
          Sign in with a passkey
        </button>
        <p id="passkey-error" class="problem" role="alert" hidden></p>
      </div>
      <p class="hint">
        No passkey yet? Open the sign-in link you were given (from your invitation, from{' '}
        <code>npm run cli -- member sign-in-link</code>, or printed by <code>npm start</code>) and register one.
      </p>
    </PublicPage>,
  );
}

/** `GET /dashboard/sign-in/link?token=...`: asks to continue, so a link preview cannot use the link up. */
export async function signInLinkPage(request: DashboardRequest): Promise<ApiGatewayResult> {
  const token = request.query.get('token') ?? '';
  const csrf = doubleSubmitToken(request, PRESESSION_CSRF_COOKIE);
  return htmlResult(
    200,
    <PublicPage title="Sign in with your link">
      <form method="post" action="/dashboard/sign-in/link" class="stack card">
        <p>This one-time link signs you in, then asks you to register a passkey for your next sign-ins.</p>
        <input type="hidden" name="token" value={token} />
        <input type="hidden" name="csrf_token" value={csrf.token} />
        <button type="submit">Continue</button>
      </form>
    </PublicPage>,
    csrf.cookies,
  );
}

/** `POST /dashboard/sign-in/link`: uses the link once and starts a session that must register a passkey. */
export async function useSignInLink(request: DashboardRequest): Promise<ApiGatewayResult> {
  try {
    const { teamId, memberId } = await consumeSignInLink(
      request.runtime.store,
      request.runtime.clock,
      request.form.get('token') ?? '',
    );
    const { cookieValue } = await createSession(request.runtime.store, request.runtime.clock, {
      teamId,
      memberId,
      state: 'registration',
      method: 'link',
      userAgent: request.headers['user-agent'],
    });
    return redirectResult('/dashboard/passkeys/new', [sessionCookie(cookieValue)]);
  } catch (error) {
    return problemPage('Sign-in link', error, request.requestId);
  }
}

/**
 * `GET /dashboard/invitations/accept#token=...`: the invitation link; the script copies the token from the fragment
 * into the form.
 */
export async function invitationPage(request: DashboardRequest): Promise<ApiGatewayResult> {
  const csrf = doubleSubmitToken(request, PRESESSION_CSRF_COOKIE);
  return htmlResult(
    200,
    <PublicPage title="Join the team">
      <form method="post" action="/dashboard/invitations/accept" class="stack card">
        <input type="hidden" name="csrf_token" value={csrf.token} />
        <p>Accept the invitation to join the team, then register a passkey to sign in.</p>
        <div>
          <label for="invitation-token">Invitation token</label>
          <input type="text" id="invitation-token" name="token" autocomplete="off" required />
          <span class="hint">Filled in from your invitation link.</span>
        </div>
        <button type="submit">Accept the invitation</button>
      </form>
    </PublicPage>,
    csrf.cookies,
  );
}

/**
 * `POST /dashboard/invitations/accept`: runs `acceptTeamInvitation` through the pipeline (the same public operation
 * as REST, counted in the same per-IP bucket, D4) and starts a session that must register a passkey: an invitation
 * is the member's first sign-in link.
 */
export async function acceptInvitation(request: DashboardRequest): Promise<ApiGatewayResult> {
  const token = request.form.get('token')?.trim() ?? '';
  const accepted = await runPublic<AcceptedTeamInvitation>(request, 'acceptTeamInvitation', { token });
  if (!accepted.ok) return problemDocumentPage('Join the team', accepted.problem);
  try {
    const { cookieValue } = await createSession(request.runtime.store, request.runtime.clock, {
      teamId: accepted.result.team.id,
      memberId: accepted.result.team_member.id,
      state: 'registration',
      method: 'link',
      userAgent: request.headers['user-agent'],
    });
    return redirectResult('/dashboard/passkeys/new', [sessionCookie(cookieValue)]);
  } catch (error) {
    return problemPage('Join the team', error, request.requestId);
  }
}

/** `POST /dashboard/sign-in/passkey-options` (JSON): a challenge for signing in with a discoverable passkey. */
export async function passkeySignInOptions(request: DashboardRequest): Promise<ApiGatewayResult> {
  const { challengeId, options } = await startPasskeySignIn(
    request.runtime.store,
    request.runtime.clock,
    request.relyingParty,
  );
  return jsonResult(200, { challenge_id: challengeId, options });
}

/** `POST /dashboard/sign-in/passkey` (JSON): verifies the passkey and starts a session. */
export async function passkeySignIn(request: DashboardRequest): Promise<ApiGatewayResult> {
  const body = (request.json ?? {}) as { challenge_id?: unknown; response?: unknown };
  try {
    if (typeof body.challenge_id !== 'string' || !body.response || typeof body.response !== 'object')
      throw new ProblemError('VALIDATION_FAILED', 'Send challenge_id and the passkey response.');
    const { teamId, memberId } = await finishPasskeySignIn(
      request.runtime.store,
      request.runtime.clock,
      request.relyingParty,
      { challengeId: body.challenge_id, response: body.response as never },
    );
    const member = await findMember(request.runtime.store, teamId, memberId);
    if (!member || member.status !== 'active')
      throw new ProblemError('AUTHENTICATION_REQUIRED', 'This passkey’s team member is no longer active.');
    const { cookieValue } = await createSession(request.runtime.store, request.runtime.clock, {
      teamId,
      memberId,
      state: 'active',
      method: 'passkey',
      userAgent: request.headers['user-agent'],
    });
    return jsonResult(200, { signed_in: true }, [sessionCookie(cookieValue)]);
  } catch (error) {
    const { problem } = toProblem(error, request.requestId);
    return jsonResult(problem.status, problem);
  }
}

/** `GET /dashboard/passkeys/new`: passkey registration (the only page a session from a sign-in link may open first). */
export async function registerPasskeyPage(request: SignedInRequest): Promise<ApiGatewayResult> {
  const passkeys = await listPasskeys(request.runtime.store, request.viewer.team.id, request.viewer.member.id);
  return htmlResult(
    200,
    <Page title="Register a passkey" viewer={request.viewer} current="/dashboard/account">
      {request.session.state === 'registration' ? (
        <Notice>
          Welcome, {request.viewer.member.name}. Register a passkey to finish signing in; next time you sign in with it.
        </Notice>
      ) : (
        ''
      )}
      <div class="card">
        <p>
          A passkey is kept by this device, your phone or your password manager. You have {passkeys.length} passkey
          {passkeys.length === 1 ? '' : 's'}.
        </p>
        <button type="button" id="register-passkey">
          Register a passkey
        </button>
        <p id="passkey-error" class="problem" role="alert" hidden></p>
      </div>
    </Page>,
  );
}

/**
 * `POST /dashboard/passkeys/registration-options` (JSON, CSRF header): a registration challenge bound to the session.
 */
export async function passkeyRegistrationOptions(request: SignedInRequest): Promise<ApiGatewayResult> {
  const { challengeId, options } = await startPasskeyRegistration(
    request.runtime.store,
    request.runtime.clock,
    request.relyingParty,
    {
      teamId: request.viewer.team.id,
      member: request.viewer.member,
      sessionId: request.session.id,
    },
  );
  return jsonResult(200, { challenge_id: challengeId, options });
}

/** `POST /dashboard/passkeys/register` (JSON, CSRF header): stores the passkey; the session becomes active. */
export async function passkeyRegister(request: SignedInRequest): Promise<ApiGatewayResult> {
  const body = (request.json ?? {}) as { challenge_id?: unknown; response?: unknown };
  try {
    if (typeof body.challenge_id !== 'string' || !body.response || typeof body.response !== 'object')
      throw new ProblemError('VALIDATION_FAILED', 'Send challenge_id and the passkey response.');
    const passkey = await finishPasskeyRegistration(
      request.runtime.store,
      request.runtime.clock,
      request.relyingParty,
      {
        teamId: request.viewer.team.id,
        memberId: request.viewer.member.id,
        sessionId: request.session.id,
        challengeId: body.challenge_id,
        response: body.response as never,
      },
    );
    await dashboardSessionStore.activate(request.runtime.store, {
      teamId: request.viewer.team.id,
      memberId: request.viewer.member.id,
      sessionId: request.session.id,
    });
    return jsonResult(201, { registered: true, created_at: passkey.created_at });
  } catch (error) {
    const { problem } = toProblem(error, request.requestId);
    return jsonResult(problem.status, problem);
  }
}

/**
 * `POST /dashboard/sign-out`: `revokeDashboardSession` of this session (surface `dashboard`, in the member's log), then
 * the cookie is cleared whatever it answered, as the portal's sign-out does.
 */
export async function signOut(request: SignedInRequest): Promise<ApiGatewayResult> {
  await write(request, 'revokeDashboardSession', { session_id: request.session.id });
  return redirectResult('/dashboard/sign-in?signed_out=1', [clearedSessionCookie()]);
}
