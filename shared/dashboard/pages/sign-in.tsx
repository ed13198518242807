/** @jsx h */
/** @jsxFrag Fragment */
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { Notice } from '../components.js';
import { problemPage } from '../problem-page.js';
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
import { listPasskeys, startPasskeyRegistration, startPasskeySignIn } from '../../domain/team-members/passkeys.js';
import { acceptTeamInvitation } from '../../domain/team-members/handlers.js';
import { teamMembersInternalHandlers } from '../../domain/team-members/internal-handlers.js';
import { acceptTeamInvitationAndSignIn } from '../../domain/team-members/sign-in-handlers.js';
import { anyHandler } from '../../operations/handler.js';
import { pageOperations } from './kit.js';

const { runPublic, write } = pageOperations({
  acceptTeamInvitation,
  signInWithLink: teamMembersInternalHandlers.signInWithLink,
  signInWithPasskey: teamMembersInternalHandlers.signInWithPasskey,
  registerPasskey: teamMembersInternalHandlers.registerPasskey,
  revokeDashboardSession: teamMembersInternalHandlers.revokeDashboardSession,
});

/** The answer of the sign-in operations: the new session and its cookie's value. */
interface StartedSession {
  session_id: string;
  state: 'registration' | 'active';
  session_cookie: string;
}

/**
 * Signing in and out of the dashboard (DESIGN D21): the sign-in page (passkey), one-time sign-in links,
 * invitation acceptance, passkey registration, the member's sessions and passkeys, sign-out.
 */

/** A refused sign-in step as a page, with the way back to sign-in. */
const problemDocumentPage = (title: string, problem: ProblemDocument): ApiGatewayResult =>
  problemPage(title, problem, { href: '/dashboard/sign-in', text: 'Back to sign-in' });

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

/**
 * `POST /dashboard/sign-in/link`: `signInWithLink` (the link used once, in the member's log) and a session that must
 * register a passkey.
 */
export async function useSignInLink(request: DashboardRequest): Promise<ApiGatewayResult> {
  const signedIn = await runPublic<StartedSession>(request, 'signInWithLink', {
    token: request.form.get('token') ?? '',
    user_agent: request.headers['user-agent'],
  });
  if (!signedIn.ok) return problemDocumentPage('Sign-in link', signedIn.problem);
  return redirectResult('/dashboard/passkeys/new', [sessionCookie(signedIn.result.session_cookie)]);
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
 * as REST, counted in the same per-IP bucket, D4) with the dashboard's handler, which also starts a session that must
 * register a passkey: an invitation is the member's first sign-in link.
 */
export async function acceptInvitation(request: DashboardRequest): Promise<ApiGatewayResult> {
  const token = request.form.get('token')?.trim() ?? '';
  const accepted = await runPublic<{ session_cookie: string }>(
    request,
    'acceptTeamInvitation',
    { token },
    anyHandler(acceptTeamInvitationAndSignIn(request.headers['user-agent'])),
  );
  if (!accepted.ok) return problemDocumentPage('Join the team', accepted.problem);
  return redirectResult('/dashboard/passkeys/new', [sessionCookie(accepted.result.session_cookie)]);
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

/** The relying party of a page request as the passkey operations take it. */
function relyingPartyInput(request: DashboardRequest) {
  return { origin: request.relyingParty.origin, rp_id: request.relyingParty.rpId };
}

/** The JSON body's fields of a passkey ceremony's answer (absent ones are the operation's VALIDATION_FAILED). */
function ceremonyAnswer(request: DashboardRequest): { challenge_id?: unknown; response?: unknown } {
  const body = (request.json ?? {}) as { challenge_id?: unknown; response?: unknown };
  return { challenge_id: body.challenge_id, response: body.response };
}

/** `POST /dashboard/sign-in/passkey` (JSON): `signInWithPasskey` verifies the passkey and starts a session. */
export async function passkeySignIn(request: DashboardRequest): Promise<ApiGatewayResult> {
  const signedIn = await runPublic<StartedSession>(request, 'signInWithPasskey', {
    ...ceremonyAnswer(request),
    relying_party: relyingPartyInput(request),
    user_agent: request.headers['user-agent'],
  });
  if (!signedIn.ok) return jsonResult(signedIn.problem.status, signedIn.problem);
  return jsonResult(200, { signed_in: true }, [sessionCookie(signedIn.result.session_cookie)]);
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

/**
 * `POST /dashboard/passkeys/register` (JSON, CSRF header): `registerPasskey` stores the passkey; the session becomes
 * active.
 */
export async function passkeyRegister(request: SignedInRequest): Promise<ApiGatewayResult> {
  const registered = await write<{ registered: true; created_at: string }>(request, 'registerPasskey', {
    ...ceremonyAnswer(request),
    session_id: request.session.id,
    relying_party: relyingPartyInput(request),
  });
  if (!registered.ok) return jsonResult(registered.problem.status, registered.problem);
  return jsonResult(201, registered.result);
}

/**
 * `POST /dashboard/sign-out`: `revokeDashboardSession` of this session (surface `dashboard`, in the member's log), then
 * the cookie is cleared whatever it answered, as the portal's sign-out does.
 */
export async function signOut(request: SignedInRequest): Promise<ApiGatewayResult> {
  await write(request, 'revokeDashboardSession', { session_id: request.session.id });
  return redirectResult('/dashboard/sign-in?signed_out=1', [clearedSessionCookie()]);
}
