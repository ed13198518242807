/** @jsx h */
import type { Principal } from '../../auth/principal.js';
import { h } from '../../web/html.js';
import { csrfTokenMatches } from '../../web/csrf.js';
import { htmlResult, redirectResult } from '../../web/results.js';
import { runOperation } from '../../web/run-operation.js';
import {
  createPortalLink,
  consumePortalLink,
  endPortalSession,
  findPortalSession,
  subscriberPrincipal,
  type PortalSession,
} from '../../domain/portal-sessions/links.js';
import { completeDiscordLink, discordAuthorizeUrl } from '../../domain/members/discord-link.js';
import { getSubscriber } from '../../domain/subscribers/repository.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import { ProblemError, toProblem } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { paymentProviderAdapters } from '../../providers/adapters.js';
import { clearedPortalCookie, PORTAL_COOKIE, portalCookie, type PublicRequest } from '../http.js';
import { NotFoundPage } from './layout.js';
import type { ManageLink } from './welcome.js';
import { portalPath, portalView, signedOut } from './portal-view.js';

/**
 * The subscriber portal (DESIGN D27, D28): a one-time link opens a session (cookie scoped to `/portal`) showing subscriptions, platform access and payments, with its actions.
 * Everything runs with the session's `subscriberPrincipal` (surface `portal`), so a subscriber only sees and changes their own objects; every POST carries the CSRF token.
 */

/** A portal page: `match` holds the path, the project id and (for subscription actions) the subscription id. */
type PortalHandler = (request: PublicRequest, match: readonly string[]) => Promise<ApiGatewayResult>;

const PROJECT = ':project{[0-9a-fA-F-]{36}}';
const SUBSCRIPTION = 'subscriptions/:subscription{[0-9a-fA-F-]{36}}';
/** `GET /portal/{project_id}/sign-in?token=`: uses the one-time link and starts a session, or the 404 page. */
const signIn: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  try {
    const { cookieValue } = await consumePortalLink(request.runtime, projectId, request.query.get('token') ?? '');
    return redirectResult(portalPath(projectId), [portalCookie(cookieValue)]);
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'NOT_FOUND') return htmlResult(404, <NotFoundPage />);
    throw error;
  }
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
  if (!signedIn) return signedOut(401);
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
    if (!signedIn) return signedOut(401);
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
    const outcome = await runOperation(request.runtime, signedIn.principal, operationId, input, {
      requestId: request.requestId,
      idempotencyKey: request.form.get('idempotency_key') ?? undefined,
      surface: 'portal',
    });
    if (!outcome.ok)
      return htmlResult(outcome.problem.status, await portalView(request, projectId, signedIn, outcome.problem));
    return redirectResult(portalPath(projectId));
  });

/** "Update payment method": a Stripe Billing Portal session for the subscriber's Stripe customer, then 303 to it. */
const paymentMethod = portalAction(async (request, projectId, subscriptionId, signedIn) => {
  const { runtime } = request;
  const fail = async (detail: string, code: 'CONFLICT' | 'PROVIDER_UNAVAILABLE') =>
    htmlResult(
      code === 'CONFLICT' ? 409 : 502,
      await portalView(
        request,
        projectId,
        signedIn,
        toProblem(new ProblemError(code, detail), request.requestId).problem,
      ),
    );
  const subscription = await runOperation<Subscription>(
    runtime,
    signedIn.principal,
    'getSubscription',
    { id: subscriptionId },
    { requestId: request.requestId, surface: 'portal' },
  );
  if (!subscription.ok)
    return htmlResult(
      subscription.problem.status,
      await portalView(request, projectId, signedIn, subscription.problem),
    );
  const subscriber = await getSubscriber(runtime.store, signedIn.principal, signedIn.session.subscriber_id);
  if (subscription.result.payment_provider !== 'stripe' || !subscriber.provider_customer_id)
    return fail('This membership is not billed through Stripe.', 'CONFLICT');
  const adapter = paymentProviderAdapters(runtime).stripe;
  const created = await adapter?.createBillingPortalSession({
    team_id: signedIn.session.team_id,
    project_id: projectId,
    provider_customer_id: subscriber.provider_customer_id,
    return_url: `${request.relyingParty.origin}${portalPath(projectId)}`,
  });
  if (!created?.ok)
    return fail('Stripe could not open the payment settings right now; try again in a moment.', 'PROVIDER_UNAVAILABLE');
  return redirectResult(created.url);
});

/**
 * `GET /portal/{project_id}/discord/link`: starts the Discord authorization-code flow (DESIGN D28) with a
 * single-use `state` bound to this portal session, and sends the subscriber to discord.com. A link rather
 * than a form: it only prepares a state Discord's consent screen must still approve.
 */
const discordLink: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(401);
  const { session } = signedIn;
  const { url } = await discordAuthorizeUrl(request.runtime, {
    teamId: session.team_id,
    projectId,
    portalSessionId: session.id,
    subscriberId: session.subscriber_id,
  });
  return redirectResult(url);
};

/**
 * `GET /portal/{project_id}/discord/callback?code=&state=`: Discord's redirect back. Links the account
 * ({@link completeDiscordLink}: the state must be this session's) and shows the portal with the outcome;
 * a refusal at Discord (`error=access_denied`) or a refused state or code shows the portal with the problem.
 */
const discordCallback: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(401);
  const { session } = signedIn;
  const problemPage = async (error: ProblemError) => {
    const { problem } = toProblem(error, request.requestId);
    return htmlResult(problem.status, await portalView(request, projectId, signedIn, problem));
  };
  const code = request.query.get('code');
  const state = request.query.get('state');
  if (request.query.get('error') || !code || !state)
    return problemPage(
      new ProblemError(
        'VALIDATION_FAILED',
        'Discord did not authorize the link; nothing was changed. Try again when you are ready.',
      ),
    );
  try {
    const result = await completeDiscordLink(request.runtime, {
      projectId,
      portalSessionId: session.id,
      subscriberId: session.subscriber_id,
      code,
      state,
    });
    return redirectResult(`${portalPath(projectId)}?discord=${result.guild}`);
  } catch (error) {
    if (error instanceof ProblemError) return problemPage(error);
    throw error;
  }
};

/** "Sign out": ends the session and deletes its cookie. */
const signOut = portalAction(async (request) => {
  await endPortalSession(request.runtime, request.cookies[PORTAL_COOKIE]);
  return signedOut(200, [clearedPortalCookie()]);
});

/** The portal's routes under `/portal` (Hono paths; `:project` and `:subscription` are UUIDs), served after the per-IP limit. */
export const PORTAL_ROUTES: ReadonlyArray<{ method: 'GET' | 'POST'; path: string; handle: PortalHandler }> = [
  { method: 'GET', path: `/${PROJECT}/sign-in`, handle: signIn },
  { method: 'GET', path: `/${PROJECT}`, handle: portalPage },
  { method: 'POST', path: `/${PROJECT}/${SUBSCRIPTION}/cancel`, handle: subscriptionAction('cancelSubscription') },
  { method: 'POST', path: `/${PROJECT}/${SUBSCRIPTION}/resume`, handle: subscriptionAction('resumeSubscription') },
  { method: 'POST', path: `/${PROJECT}/${SUBSCRIPTION}/payment-method`, handle: paymentMethod },
  { method: 'POST', path: `/${PROJECT}/sign-out`, handle: signOut },
  { method: 'GET', path: `/${PROJECT}/discord/link`, handle: discordLink },
  { method: 'GET', path: `/${PROJECT}/discord/callback`, handle: discordCallback },
];

/** The welcome page's "Manage your membership" link: a fresh one-time portal link (its path) for the subscription's subscriber. */
export function portalManageLink(request: PublicRequest): ManageLink {
  return async (teamId, subscription) =>
    (await createPortalLink(request.runtime, teamId, subscription.project_id, subscription.subscriber_id)).path;
}
