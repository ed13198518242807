/** @jsx h */
import type { Principal } from '../../auth/principal.js';
import { h } from '../../web/html.js';
import { csrfRefusal, csrfTokenMatches } from '../../web/csrf.js';
import { htmlResult, redirectResult } from '../../web/results.js';
import { runPublicOperation } from '../operations.js';
import {
  createPortalLink,
  findPortalSession,
  subscriberPrincipal,
  type PortalSession,
} from '../../domain/portal-sessions/links.js';
import { failureOf, ProblemError, toProblem, type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import {
  clearedPortalCookie,
  hasPortalCsrf,
  PORTAL_COOKIE,
  portalCookie,
  portalCsrfToken,
  type PublicRequest,
} from '../http.js';
import { joinContext } from '../join-context.js';
import { NotFoundPage } from './layout.js';
import { requestSignInLinkPage } from './sign-in-link.js';
import type { ManageLink } from './welcome.js';
import { portalPath, portalView, signedOut } from './portal-view.js';

/**
 * The subscriber portal (DESIGN D27, D28): a one-time link opens a session (cookie scoped to `/portal`) showing
 * subscriptions, platform access and payments, with its actions. Everything runs with the session's
 * `subscriberPrincipal` (surface `portal`), so a subscriber only sees and changes their own objects; every POST carries
 * the CSRF token.
 */

/** A portal page: `match` holds the path, the project id and (for subscription actions) the subscription id. */
type PortalHandler = (request: PublicRequest, match: readonly string[]) => Promise<ApiGatewayResult>;

const PROJECT = ':project{[0-9a-fA-F-]{36}}';
const SUBSCRIPTION = 'subscriptions/:subscription{[0-9a-fA-F-]{36}}';
/**
 * `GET /portal/{project_id}/sign-in?token=`: `signInToPortal` uses the one-time link and starts a session, or the 404
 * page for every link it cannot use.
 */
const signIn: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await runPublicOperation<{ session_cookie: string }>(request, null, 'signInToPortal', {
    project_id: projectId,
    token: (request.query.get('token') ?? '').trim(),
  });
  if (signedIn.ok) return redirectResult(portalPath(projectId), [portalCookie(signedIn.result.session_cookie)]);
  if (signedIn.problem.code === 'NOT_FOUND' || signedIn.problem.code === 'VALIDATION_FAILED')
    return htmlResult(404, <NotFoundPage />);
  throw failureOf(signedIn);
};

/** The session of a portal request and its principal, or null (no, unknown, idle or other project's session). */
async function sessionOf(
  request: PublicRequest,
  projectId: string,
): Promise<{ session: PortalSession; principal: Principal } | null> {
  const session = await findPortalSession(request.runtime, projectId, request.cookies[PORTAL_COOKIE]);
  return session ? { session, principal: subscriberPrincipal(session) } : null;
}

/** `GET /portal/{project_id}`: the portal page, or the signed-out page. */
const portalPage: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(request, projectId, 401);
  return htmlResult(200, await portalView(request, projectId, signedIn));
};

/** A POST of the portal: needs a live session and its CSRF token (403 otherwise); then `act`. */
function portalAction(
  act: (
    request: PublicRequest,
    projectId: string,
    subscriptionId: string,
    signedIn: { session: PortalSession; principal: Principal },
  ) => Promise<ApiGatewayResult>,
): PortalHandler {
  return async (request, match) => {
    const projectId = match[1].toLowerCase();
    const signedIn = await sessionOf(request, projectId);
    if (!signedIn) return signedOut(request, projectId, 401);
    if (!csrfTokenMatches(request.form.get('csrf_token'), signedIn.session.csrf_token)) {
      const { problem } = toProblem(
        new ProblemError(
          'CSRF_TOKEN_INVALID',
          'This form did not carry the security token of your session; nothing was changed.',
        ),
        request.requestId,
      );
      return htmlResult(403, await portalView(request, projectId, signedIn, problem));
    }
    return act(request, projectId, match[2]?.toLowerCase() ?? '', signedIn);
  };
}

/** Runs cancel (at period end) or resume as the subscriber, then shows the portal again (or the problem). */
const subscriptionAction = (operationId: 'cancelSubscription' | 'resumeSubscription') =>
  portalAction(async (request, projectId, subscriptionId, signedIn) => {
    const input =
      operationId === 'cancelSubscription' ? { id: subscriptionId, at_period_end: true } : { id: subscriptionId };
    const outcome = await runPublicOperation(
      request,
      signedIn.principal,
      operationId,
      input,
      request.form.get('idempotency_key') ?? undefined,
    );
    if (!outcome.ok)
      return htmlResult(outcome.problem.status, await portalView(request, projectId, signedIn, outcome.problem));
    return redirectResult(portalPath(projectId));
  });

/** The portal page with the problem of a failed action above, answered with the problem's status. */
async function problemView(
  request: PublicRequest,
  projectId: string,
  signedIn: { session: PortalSession; principal: Principal },
  problem: ProblemDocument,
): Promise<ApiGatewayResult> {
  return htmlResult(problem.status, await portalView(request, projectId, signedIn, problem));
}

/** Runs an internal operation of the portal as the session's subscriber (surface `portal`, DESIGN D27, D35). */
function runPortalOperation<T>(
  request: PublicRequest,
  signedIn: { principal: Principal },
  operationId: 'openBillingPortal' | 'signOutOfPortal' | 'startDiscordLink' | 'linkDiscordAccount',
  input: Record<string, unknown>,
  idempotencyKey?: string,
) {
  return runPublicOperation<T>(request, signedIn.principal, operationId, input, idempotencyKey);
}

/** "Update payment method": `openBillingPortal` (a Stripe Billing Portal session), then 303 to it. */
const paymentMethod = portalAction(async (request, projectId, subscriptionId, signedIn) => {
  const opened = await runPortalOperation<{ url: string }>(
    request,
    signedIn,
    'openBillingPortal',
    { subscription_id: subscriptionId, return_url: `${request.relyingParty.origin}${portalPath(projectId)}` },
    request.form.get('idempotency_key') ?? undefined,
  );
  if (!opened.ok) return problemView(request, projectId, signedIn, opened.problem);
  return redirectResult(opened.result.url);
});

/**
 * `GET /portal/{project_id}/discord/link`: `startDiscordLink` (DESIGN D28: a single-use `state` bound to this portal
 * session), then to discord.com. A link rather than a form: it only prepares a state Discord's consent screen must
 * still approve.
 */
const discordLink: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(request, projectId, 401);
  const started = await runPortalOperation<{ url: string }>(request, signedIn, 'startDiscordLink', {
    portal_session_id: signedIn.session.id,
  });
  if (!started.ok) return problemView(request, projectId, signedIn, started.problem);
  return redirectResult(started.result.url);
};

/**
 * `GET /portal/{project_id}/discord/callback?code=&state=`: Discord's redirect back. `linkDiscordAccount` (the state
 * must be this session's; single use, so a repeat is refused rather than replayed) and the portal with the outcome;
 * a refusal at Discord (`error=access_denied`) or a refused state or code shows the portal with the problem.
 */
const discordCallback: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(request, projectId, 401);
  const code = request.query.get('code');
  const state = request.query.get('state');
  if (request.query.get('error') || !code || !state) {
    const refusal = new ProblemError(
      'VALIDATION_FAILED',
      'Discord did not authorize the link; nothing was changed. Try again when you are ready.',
    );
    return problemView(request, projectId, signedIn, toProblem(refusal, request.requestId).problem);
  }
  const linked = await runPortalOperation<{ guild: string }>(request, signedIn, 'linkDiscordAccount', {
    portal_session_id: signedIn.session.id,
    code,
    state,
  });
  if (!linked.ok) return problemView(request, projectId, signedIn, linked.problem);
  return redirectResult(`${portalPath(projectId)}?discord=${linked.result.guild}`);
};

/**
 * `POST /portal/{project_id}/sign-in-link`, signed out: "E-mail me a sign-in link" with the portal's double-submit CSRF
 * token (403 without it); any project id gets the same answer (the signed-out portal shows no project either).
 */
const emailSignInLink: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  if (!hasPortalCsrf(request)) throw csrfRefusal('This form did not carry its security token; nothing was changed.');
  return requestSignInLinkPage(request, projectId, await joinContext(request, projectId), {
    action: `${portalPath(projectId)}/sign-in-link`,
    csrf: portalCsrfToken(request).token,
  });
};

/** "Sign out": `signOutOfPortal` ends the session; the cookie is deleted. */
const signOut = portalAction(async (request, projectId, _subscriptionId, signedIn) => {
  await runPortalOperation(
    request,
    signedIn,
    'signOutOfPortal',
    { session_cookie: request.cookies[PORTAL_COOKIE] ?? '' },
    request.form.get('idempotency_key') ?? undefined,
  );
  return signedOut(request, projectId, 200, [clearedPortalCookie()]);
});

/**
 * The portal's routes under `/portal` (Hono paths; `:project` and `:subscription` are UUIDs), served after the per-IP
 * limit.
 */
export const PORTAL_ROUTES: ReadonlyArray<{ method: 'GET' | 'POST'; path: string; handle: PortalHandler }> = [
  { method: 'GET', path: `/${PROJECT}/sign-in`, handle: signIn },
  { method: 'GET', path: `/${PROJECT}`, handle: portalPage },
  { method: 'POST', path: `/${PROJECT}/${SUBSCRIPTION}/cancel`, handle: subscriptionAction('cancelSubscription') },
  { method: 'POST', path: `/${PROJECT}/${SUBSCRIPTION}/resume`, handle: subscriptionAction('resumeSubscription') },
  { method: 'POST', path: `/${PROJECT}/${SUBSCRIPTION}/payment-method`, handle: paymentMethod },
  { method: 'POST', path: `/${PROJECT}/sign-out`, handle: signOut },
  { method: 'POST', path: `/${PROJECT}/sign-in-link`, handle: emailSignInLink },
  { method: 'GET', path: `/${PROJECT}/discord/link`, handle: discordLink },
  { method: 'GET', path: `/${PROJECT}/discord/callback`, handle: discordCallback },
];

/**
 * The welcome page's "Manage your membership" link: a fresh one-time portal link (its path) for the subscription's
 * subscriber.
 */
export function portalManageLink(request: PublicRequest): ManageLink {
  return async (teamId, subscription) =>
    (await createPortalLink(request.runtime, teamId, subscription.project_id, subscription.subscriber_id)).path;
}
