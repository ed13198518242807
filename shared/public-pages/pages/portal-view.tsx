/** @jsx h */
import type { Principal } from '../../auth/principal.js';
import { DataTable, IdempotencyField, ProblemView, SubscriptionStatusBadge, When } from '../../web/components.js';
import { h, type Html } from '../../web/html.js';
import { htmlResult } from '../../web/results.js';
import type { ListPage } from '../../web/run-operation.js';
import { runPublicOperation } from '../operations.js';
import type { Payment } from '../../domain/payments/schema.js';
import { listPlans } from '../../domain/plans/repository.js';
import type { Plan } from '../../domain/plans/schema.js';
import { type PortalSession } from '../../domain/portal-sessions/links.js';
import { getProject } from '../../domain/projects/repository.js';
import type { Project } from '../../domain/projects/schema.js';
import { discordLinkState, type DiscordLinkState } from '../../domain/members/discord-link.js';
import { getSubscriber } from '../../domain/subscribers/repository.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import { type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formatPrice } from '../../schemas/common.js';
import { PORTAL_PATH, portalCsrfToken, type PublicRequest } from '../http.js';
import { priceLabel } from './join.js';
import { couponSummary } from '../../domain/coupons/decisions.js';
import type { Discount } from '../../domain/coupons/discount.js';
import { MemberPage } from './layout.js';
import { SignInLinkForm } from './sign-in-link.js';
/**
 * The subscriber portal's page (DESIGN D27, D28): the subscriber's subscriptions as cards with their actions,
 * the Discord link state, payments, and the signed-out page. The routes and actions are in `./portal.tsx`.
 */
/** Subscriptions that can be cancelled at the end of their period. */
const CANCELLABLE = new Set<Subscription['status']>(['trialing', 'active', 'past_due']);

/** The portal path of a project. */
export const portalPath = (projectId: string) => `${PORTAL_PATH}/${projectId}`;

/**
 * The page of a request without a live portal session: how to get a new link (no data of anyone), with "E-mail me a
 * sign-in link" (its CSRF cookie set on a first visit).
 */
export function signedOut(
  request: PublicRequest,
  projectId: string,
  status: number,
  cookies: string[] = [],
): ApiGatewayResult {
  const csrf = portalCsrfToken(request);
  return htmlResult(
    status,
    <MemberPage title="Your membership">
      <p>
        You are signed out of the membership portal. Open a new link from your welcome page, ask the community’s bot for
        one (for example with /account), or have one e-mailed to you.
      </p>
      <SignInLinkForm
        action={`${portalPath(projectId)}/sign-in-link`}
        csrf={csrf.token}
        heading="E-mail me a sign-in link"
      />
    </MemberPage>,
    [...cookies, ...csrf.cookies],
  );
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
/** A subscription's discount for its subscriber: "Code LAUNCH50: 50% off the first payment, until 1 Dec 2026". */
function DiscountLine(props: { discount: Discount }): Html {
  const { discount } = props;
  const name = discount.promotion_code ? `Code ${discount.promotion_code}` : 'Discount';
  return (
    <p>
      {name}: {couponSummary({ ...discount, duration_in_months: null }, formatPrice)}
      {discount.end ? (
        <span>
          , until <When at={discount.end} />
        </span>
      ) : (
        ''
      )}
    </p>
  );
}

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
      {subscription.discount ? <DiscountLine discount={subscription.discount} /> : ''}
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

/**
 * The Discord section of a Discord project's portal: the subscriber's link state, and the link to (re)link an account
 * (DESIGN D28).
 */
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
export async function portalView(
  request: PublicRequest,
  projectId: string,
  signedIn: { session: PortalSession; principal: Principal },
  problem?: ProblemDocument,
): Promise<Html> {
  const { runtime } = request;
  const { principal, session } = signedIn;
  const [project, plans, subscriptions, payments] = await Promise.all([
    getProject(runtime.store, principal, projectId),
    listPlans(runtime.store, principal, projectId, { limit: 100 }),
    runPublicOperation<ListPage<Subscription>>(request, principal, 'listSubscriptions', {
      project_id: projectId,
      limit: 100,
    }),
    runPublicOperation<ListPage<Payment>>(request, principal, 'listPayments', { project_id: projectId, limit: 25 }),
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
