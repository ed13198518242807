/** @jsx h */
import type { Principal } from '../../auth/principal.js';
import { DataTable, IdempotencyField, ProblemView, SubscriptionStatusBadge, When } from '../../dashboard/components.js';
import { h, type Html } from '../../dashboard/html.js';
import { htmlResult, redirectResult, sameToken } from '../../dashboard/http.js';
import type { ListPage } from '../../dashboard/pages/kit.js';
import { runOperation } from '../../dashboard/run-operation.js';
import type { Payment } from '../../domain/payments/schema.js';
import { listPlans } from '../../domain/plans/repository.js';
import type { Plan } from '../../domain/plans/schema.js';
import {
  createPortalLink,
  consumePortalLink,
  findPortalSession,
  subscriberPrincipal,
  type PortalSession,
} from '../../domain/portal-sessions/links.js';
import { getProject } from '../../domain/projects/repository.js';
import type { Project } from '../../domain/projects/schema.js';
import { discordLinkState, type DiscordLinkState } from '../../domain/members/discord-link.js';
import { getSubscriber } from '../../domain/subscribers/repository.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import { ProblemError, toProblem, type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formatPrice } from '../../schemas/common.js';
import {
  clearedPortalCookie,
  PORTAL_COOKIE,
  PORTAL_PATH,
  portalCookie,
  publicResult,
  type PublicRequest,
} from '../http.js';
import { priceLabel } from './join.js';
import { MemberPage, NotFoundPage } from './layout.js';
import type { ManageLink } from './welcome.js';

/**
 * The subscriber portal (DESIGN D27, D28): a one-time link opens a session (cookie scoped to `/portal`) showing subscriptions, platform access and payments, with its actions.
 * Everything runs with the session's `subscriberPrincipal` (surface `portal`), so a subscriber only sees and changes their own objects; every POST carries the CSRF token.
 */

/** Subscriptions that can be cancelled at the end of their period. */
const CANCELLABLE = new Set<Subscription['status']>(['trialing', 'active', 'past_due']);

type PortalHandler = (
  request: PublicRequest,
  match: RegExpExecArray,
  formOrigins: readonly string[],
) => Promise<ApiGatewayResult>;

const UUID = '([0-9a-fA-F-]{36})';
const portalPath = (projectId: string) => `${PORTAL_PATH}/${projectId}`;

/** The page of a request without a live portal session: how to get a new link (no data of anyone). */
function signedOut(status: number, cookies?: string[]): ApiGatewayResult {
  return publicResult(
    htmlResult(
      status,
      <MemberPage title="Your membership">
        <p>
          You are signed out of the membership portal. Open a new link from your welcome page, or ask the community’s
          bot for one (for example with /account).
        </p>
      </MemberPage>,
      cookies,
    ),
  );
}

/** `GET /portal/{project_id}/sign-in?token=`: uses the one-time link and starts a session, or the 404 page. */
const signIn: PortalHandler = async (request, match) => {
  const projectId = match[1].toLowerCase();
  try {
    const { cookieValue } = await consumePortalLink(request.runtime, projectId, request.query.get('token') ?? '');
    return publicResult(redirectResult(portalPath(projectId), [portalCookie(cookieValue)]));
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'NOT_FOUND')
      return publicResult(htmlResult(404, <NotFoundPage />));
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

/** One action form of a subscription: CSRF token, idempotency key, one button. */
function ActionForm(props: { action: string; csrf: string; label: string; secondary?: boolean }): Html {
  return (
    <form method="post" action={props.action} class="inline-form">
      <input type="hidden" name="csrf_token" value={props.csrf} />
      <IdempotencyField />
      <button type="submit" class={props.secondary ? 'secondary' : undefined}>
        {props.label}
      </button>
    </form>
  );
}

/** One subscription as a card: plan, price, status, dates, access and its actions. */
function SubscriptionCard(props: {
  project: Project;
  subscription: Subscription;
  plan: Plan | undefined;
  csrf: string;
}): Html {
  const { subscription, plan } = props;
  const base = `${portalPath(props.project.id)}/subscriptions/${subscription.id}`;
  const ending = subscription.cancel_at_period_end || subscription.ends_at !== null;
  const until = subscription.cancel_at_period_end
    ? subscription.current_period_end
    : (subscription.ends_at ?? subscription.current_period_end);
  return (
    <section class="card" aria-labelledby={`subscription-${subscription.id}`}>
      <h2 id={`subscription-${subscription.id}`}>{plan?.name ?? 'Membership'}</h2>
      <p>
        <SubscriptionStatusBadge status={subscription.status} /> {plan ? <span>{priceLabel(plan)}</span> : ''}
      </p>
      {subscription.has_access && until ? (
        <p>
          {ending ? 'Ends on' : 'Renews on'} <When at={until} />
        </p>
      ) : (
        ''
      )}
      {subscription.invite_links.length > 0 ? (
        <ul>
          {subscription.invite_links.map((link) => (
            <li>
              <a href={link.url} rel="noreferrer">
                Your invite link to {props.project.name}
              </a>
            </li>
          ))}
        </ul>
      ) : (
        ''
      )}
      <div class="actions">
        {CANCELLABLE.has(subscription.status) && !subscription.cancel_at_period_end ? (
          <ActionForm action={`${base}/cancel`} csrf={props.csrf} label="Cancel at period end" secondary />
        ) : (
          ''
        )}
        {subscription.status === 'pending_cancellation' ? (
          <ActionForm action={`${base}/resume`} csrf={props.csrf} label="Resume" />
        ) : (
          ''
        )}
        {subscription.payment_provider === 'stripe' && subscription.has_access ? (
          <ActionForm action={`${base}/payment-method`} csrf={props.csrf} label="Update payment method" secondary />
        ) : (
          ''
        )}
      </div>
    </section>
  );
}

/** What the last Discord linking did, as the callback reports it in `?discord=` (DESIGN D28). */
const DISCORD_OUTCOMES: Record<string, string> = {
  joined: 'Your Discord account is linked, and you were added to the server with your roles.',
  already_in: 'Your Discord account is linked, and your roles were added in the server.',
  no_access: 'Your Discord account is linked; you get the server’s roles while your membership gives access.',
  failed: 'Your Discord account is linked, but Discord did not let us add you to the server yet; we will keep trying.',
};

/** What the portal says of each {@link DiscordLinkState} when no linking just happened. */
const DISCORD_LINK_STATES: Record<DiscordLinkState, string> = {
  not_linked: 'Link your Discord account to join the server with the roles of your membership.',
  linked: 'Your Discord account is linked.',
  relink_required:
    'Your Discord authorization has expired or was revoked: link your Discord account again to keep joining the server with your roles.',
};

/** The Discord section of a Discord project's portal: the subscriber's link state, and the link to (re)link an account (DESIGN D28). */
function DiscordAccess(props: { projectId: string; state: DiscordLinkState; outcome: string | null }): Html {
  const outcome = props.outcome ? DISCORD_OUTCOMES[props.outcome] : undefined;
  return (
    <section class="card" aria-labelledby="discord-access">
      <h2 id="discord-access">Discord</h2>
      {outcome ? <p role="status">{outcome}</p> : <p>{DISCORD_LINK_STATES[props.state]}</p>}
      <p>
        <a class="button" href={`${portalPath(props.projectId)}/discord/link`}>
          {props.state === 'linked'
            ? 'Link another Discord account'
            : props.state === 'relink_required'
              ? 'Link your Discord account again'
              : 'Link your Discord account'}
        </a>
      </p>
    </section>
  );
}

/** The portal page: the subscriber's subscriptions and payments, with a problem of a failed action above. */
async function portalView(
  request: PublicRequest,
  projectId: string,
  signedIn: { session: PortalSession; principal: Principal },
  problem?: ProblemDocument,
): Promise<Html> {
  const { runtime, requestId } = request;
  const { principal, session } = signedIn;
  const options = { requestId, surface: 'portal' as const };
  const [project, plans, subscriptions, payments] = await Promise.all([
    getProject(runtime.store, principal, projectId),
    listPlans(runtime.store, principal, projectId, { limit: 100 }),
    runOperation<ListPage<Subscription>>(
      runtime,
      principal,
      'listSubscriptions',
      { project_id: projectId, limit: 100 },
      options,
    ),
    runOperation<ListPage<Payment>>(runtime, principal, 'listPayments', { project_id: projectId, limit: 25 }, options),
  ]);
  const planById = new Map(plans.data.map((plan) => [plan.id, plan]));
  const discordState =
    project.platform_type === 'discord' && project.bot
      ? await discordLinkState(
          runtime.store,
          principal.teamId,
          await getSubscriber(runtime.store, principal, session.subscriber_id),
        )
      : null;
  return (
    <MemberPage title="Your membership" site={project.name}>
      {problem ? <ProblemView problem={problem} /> : ''}
      {discordState === null ? (
        ''
      ) : (
        <DiscordAccess projectId={projectId} state={discordState} outcome={request.query.get('discord')} />
      )}
      {!subscriptions.ok ? (
        <ProblemView problem={subscriptions.problem} />
      ) : subscriptions.result.data.length === 0 ? (
        <p class="hint">You have no memberships here.</p>
      ) : (
        subscriptions.result.data.map((subscription) => (
          <SubscriptionCard
            project={project}
            subscription={subscription}
            plan={planById.get(subscription.plan_id)}
            csrf={session.csrf_token}
          />
        ))
      )}
      <h2>Payments</h2>
      {payments.ok ? (
        <DataTable
          caption="Your payments, newest first"
          columns={[
            { label: 'Date', cell: (payment: Payment) => <When at={payment.created_at} /> },
            { label: 'Amount', cell: (payment: Payment) => formatPrice(payment.amount, payment.currency) },
            { label: 'Status', cell: (payment: Payment) => payment.status },
          ]}
          rows={payments.result.data}
          empty="No payments yet."
        />
      ) : (
        <ProblemView problem={payments.problem} />
      )}
      <form method="post" action={`${portalPath(projectId)}/sign-out`}>
        <input type="hidden" name="csrf_token" value={session.csrf_token} />
        <IdempotencyField />
        <button type="submit" class="secondary">
          Sign out
        </button>
      </form>
    </MemberPage>
  );
}

/** `GET /portal/{project_id}`: the portal page, or the signed-out page. */
const portalPage: PortalHandler = async (request, match, formOrigins) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(401);
  return publicResult(htmlResult(200, await portalView(request, projectId, signedIn)), formOrigins);
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
    if (!sameToken(request.form.get('csrf_token'), signedIn.session.csrf_token)) {
      const { problem } = toProblem(
        new ProblemError(
          'CSRF_TOKEN_INVALID',
          'This form did not carry the security token of your session; nothing was changed.',
        ),
        request.requestId,
      );
      return publicResult(htmlResult(403, await portalView(request, projectId, signedIn, problem)));
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
      return publicResult(
        htmlResult(outcome.problem.status, await portalView(request, projectId, signedIn, outcome.problem)),
      );
    return publicResult(redirectResult(portalPath(projectId)));
  });

/** The portal page with the problem of a failed action above, answered with the problem's status. */
async function problemView(
  request: PublicRequest,
  projectId: string,
  signedIn: { session: PortalSession; principal: Principal },
  problem: ProblemDocument,
  formOrigins?: readonly string[],
): Promise<ApiGatewayResult> {
  return publicResult(htmlResult(problem.status, await portalView(request, projectId, signedIn, problem)), formOrigins);
}

/** Runs an internal operation of the portal as the session's subscriber (surface `portal`, DESIGN D27, D35). */
function runPortalOperation<T>(
  request: PublicRequest,
  signedIn: { principal: Principal },
  operationId: 'openBillingPortal' | 'signOutOfPortal' | 'startDiscordLink' | 'linkDiscordAccount',
  input: Record<string, unknown>,
  idempotencyKey?: string,
) {
  return runOperation<T>(request.runtime, signedIn.principal, operationId, input, {
    requestId: request.requestId,
    idempotencyKey,
    surface: 'portal',
  });
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
  return publicResult(redirectResult(opened.result.url));
});

/**
 * `GET /portal/{project_id}/discord/link`: `startDiscordLink` (DESIGN D28: a single-use `state` bound to this portal
 * session), then to discord.com. A link rather than a form: it only prepares a state Discord's consent screen must
 * still approve.
 */
const discordLink: PortalHandler = async (request, match, formOrigins) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(401);
  const started = await runPortalOperation<{ url: string }>(request, signedIn, 'startDiscordLink', {
    portal_session_id: signedIn.session.id,
  });
  if (!started.ok) return problemView(request, projectId, signedIn, started.problem, formOrigins);
  return publicResult(redirectResult(started.result.url));
};

/**
 * `GET /portal/{project_id}/discord/callback?code=&state=`: Discord's redirect back. `linkDiscordAccount` (the state
 * must be this session's; single use, so a repeat is refused rather than replayed) and the portal with the outcome; a refusal at Discord (`error=access_denied`) or a refused
 * state or code shows the portal with the problem.
 */
const discordCallback: PortalHandler = async (request, match, formOrigins) => {
  const projectId = match[1].toLowerCase();
  const signedIn = await sessionOf(request, projectId);
  if (!signedIn) return signedOut(401);
  const code = request.query.get('code');
  const state = request.query.get('state');
  if (request.query.get('error') || !code || !state) {
    const refusal = new ProblemError(
      'VALIDATION_FAILED',
      'Discord did not authorize the link; nothing was changed. Try again when you are ready.',
    );
    return problemView(request, projectId, signedIn, toProblem(refusal, request.requestId).problem, formOrigins);
  }
  const linked = await runPortalOperation<{ guild: string }>(request, signedIn, 'linkDiscordAccount', {
    portal_session_id: signedIn.session.id,
    code,
    state,
  });
  if (!linked.ok) return problemView(request, projectId, signedIn, linked.problem, formOrigins);
  return publicResult(redirectResult(`${portalPath(projectId)}?discord=${linked.result.guild}`));
};

/** "Sign out": `signOutOfPortal` ends the session; the cookie is deleted. */
const signOut = portalAction(async (request, _projectId, _subscriptionId, signedIn) => {
  await runPortalOperation(
    request,
    signedIn,
    'signOutOfPortal',
    { session_cookie: request.cookies[PORTAL_COOKIE] ?? '' },
    request.form.get('idempotency_key') ?? undefined,
  );
  return signedOut(200, [clearedPortalCookie()]);
});

/** The portal's routes (the router matches them after the rate limit). */
export const PORTAL_ROUTES: ReadonlyArray<{ method: 'GET' | 'POST'; pattern: RegExp; handle: PortalHandler }> = [
  { method: 'GET', pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/sign-in/?$`), handle: signIn },
  { method: 'GET', pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/?$`), handle: portalPage },
  {
    method: 'POST',
    pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/subscriptions/${UUID}/cancel/?$`),
    handle: subscriptionAction('cancelSubscription'),
  },
  {
    method: 'POST',
    pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/subscriptions/${UUID}/resume/?$`),
    handle: subscriptionAction('resumeSubscription'),
  },
  {
    method: 'POST',
    pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/subscriptions/${UUID}/payment-method/?$`),
    handle: paymentMethod,
  },
  { method: 'POST', pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/sign-out/?$`), handle: signOut },
  { method: 'GET', pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/discord/link/?$`), handle: discordLink },
  { method: 'GET', pattern: new RegExp(`^${PORTAL_PATH}/${UUID}/discord/callback/?$`), handle: discordCallback },
];

/** The welcome page's "Manage your membership" link: a fresh one-time portal link (its path) for the subscription's subscriber. */
export function portalManageLink(request: PublicRequest): ManageLink {
  return async (teamId, subscription) =>
    (await createPortalLink(request.runtime, teamId, subscription.project_id, subscription.subscriber_id)).path;
}
