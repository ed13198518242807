/** @jsx h */
/** @jsxFrag Fragment */
import { SubscriptionStatusBadge } from '../../web/components.js';
import { Fragment, h, type Html } from '../../web/html.js';
import { htmlResult } from '../../web/results.js';
import type { Project } from '../../domain/projects/schema.js';
import { getSubscription } from '../../domain/subscriptions/queries.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import { ProblemError } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { PublicRequest } from '../http.js';
import { findCheckoutSubscription } from '../../domain/checkout-sessions/repository.js';
import { findWelcomeLink } from '../welcome-links.js';
import { CheckInbox, CheckInboxPage } from './free-join.js';
import type { JoinContext } from '../join-context.js';
import { MemberPage, NotFoundPage } from './layout.js';

/**
 * The welcome page after a join (DESIGN D26): `?session_id=` (Stripe Checkout) or `?subscription=&t=` (signed welcome
 * link; a free join's before its address is confirmed only says "Check your inbox"); polls with htmx every 2 seconds
 * until access is granted, at most {@link MAX_POLLS} times, and always ends somewhere: the invite link, why there is
 * none (no bot connected), or what to do next, with a link to the portal. A forged or foreign link shows the one "not
 * found" page and grants nothing.
 */

/** Polls of one welcome page (every 2 seconds: 3 minutes), counted in its `polls` query parameter. */
const MAX_POLLS = 90;

/** Statuses during which the welcome page keeps polling: access may still come. */
const WAITING = new Set<Subscription['status']>(['pending', 'incomplete', 'scheduled']);

/** Makes a one-time portal link (a path) for the subscriber of a subscription, or null when none can be made. */
export type ManageLink = (teamId: string, subscription: Subscription) => Promise<string | null>;

/** How to get in once access is granted: the personal invite links, or a note for a web or other platform. */
function HowToGetIn(props: { project: Project; subscription: Subscription }): Html {
  const links = props.subscription.invite_links;
  if (links.length > 0) {
    return (
      <>
        <p>Your personal invite link (it works once):</p>
        <ul>
          {links.map((link) => (
            <li>
              <a href={link.url} rel="noreferrer">
                Join {props.project.name} on{' '}
                {props.project.platform_type === 'telegram' ? 'Telegram' : props.project.platform_type}
              </a>
            </li>
          ))}
        </ul>
      </>
    );
  }
  if (props.project.platform_type === 'telegram' && !props.project.bot)
    return (
      <p>
        Your access is active, but {props.project.name} has not connected its Telegram bot yet, so there is no invite
        link to show. Once it does, “Manage your membership” gives you the link.
      </p>
    );
  if (props.project.platform_type === 'telegram')
    return <p>Your invite link is on its way: this page shows it as soon as it is made.</p>;
  if (props.project.platform_type === 'discord' && !props.project.bot)
    return (
      <p>
        Your access is active, but {props.project.name} has not connected its Discord server yet. Once it does, open
        “Manage your membership” and choose “Link your Discord account” to join the server with your roles.
      </p>
    );
  if (props.project.platform_type === 'discord') {
    return (
      <p>
        Your access is active: open “Manage your membership” below and choose “Link your Discord account” to join the
        server with your roles.
      </p>
    );
  }
  return <p>Your access is active: sign in on {props.project.name}’s site with the e-mail address you used here.</p>;
}

/**
 * True while access may still come: no subscription yet, one not started, or a Telegram invite link still to come
 * (only with a bot to make it).
 */
function isWaiting(project: Project, subscription: Subscription | null): boolean {
  return (
    !subscription ||
    WAITING.has(subscription.status) ||
    (subscription.has_access &&
      subscription.invite_links.length === 0 &&
      project.platform_type === 'telegram' &&
      project.bot !== null)
  );
}

/** The part of the page that polls: the status and what to do next. */
function StatusPart(props: {
  self: string;
  project: Project;
  subscription: Subscription | null;
  manage: string | null;
  /** True once the page has polled {@link MAX_POLLS} times while still waiting. */
  gaveUp: boolean;
}): Html {
  const { subscription } = props;
  const waiting = isWaiting(props.project, subscription) && !props.gaveUp;
  const poll = waiting ? { 'hx-get': props.self, 'hx-trigger': 'every 2s', 'hx-swap': 'outerHTML' } : {};
  return (
    <div id="welcome-status" class="card" aria-live="polite" {...poll}>
      {!subscription ? (
        <p>We are confirming your payment. This page updates by itself; you can also reload it.</p>
      ) : (
        <>
          <p>
            Your membership: <SubscriptionStatusBadge status={subscription.status} />
          </p>
          {subscription.has_access ? (
            <HowToGetIn project={props.project} subscription={subscription} />
          ) : WAITING.has(subscription.status) ? (
            <p>We are setting up your membership. This page updates by itself.</p>
          ) : (
            <p>This membership does not give access right now.</p>
          )}
          {props.manage && subscription.has_access ? (
            <p>
              <a class="button secondary" href={props.manage}>
                Manage your membership
              </a>
            </p>
          ) : (
            ''
          )}
        </>
      )}
      {props.gaveUp ? (
        <p>
          This is taking longer than usual. Nothing is lost: reload this page in a few minutes
          {props.manage ? ', or manage your membership above' : ''}.
        </p>
      ) : (
        ''
      )}
    </div>
  );
}

/**
 * `GET /join/{project_id}/welcome`: the whole page, or for an htmx poll only its status part. An unknown
 * checkout session shows the confirming message (and polls); a welcome link that does not verify, or
 * names another subscription or project, shows the "not found" page.
 */
export async function welcomePage(
  request: PublicRequest,
  context: JoinContext,
  manageLink: ManageLink,
): Promise<ApiGatewayResult> {
  const { project } = context;
  const sessionId = request.query.get('session_id');
  const subscriptionId = request.query.get('subscription');
  const found = sessionId
    ? await findCheckoutSubscription(request.runtime.store, project.id, sessionId)
    : await findWelcomeLink(request.runtime.store, request.runtime.clock, project.id, request.query.get('t'));
  if (
    (!sessionId && (!found || found.subscriptionId !== subscriptionId)) ||
    (found && found.teamId !== context.teamId)
  ) {
    return htmlResult(404, <NotFoundPage />);
  }
  if (found && 'awaitingConfirmation' in found && found.awaitingConfirmation)
    return htmlResult(200, request.htmx ? <CheckInbox /> : <CheckInboxPage site={project.name} />);
  let subscription: Subscription | null = null;
  if (found) {
    try {
      subscription = await getSubscription(request.runtime.store, context.principal, found.subscriptionId);
    } catch (error) {
      if (!(error instanceof ProblemError && error.code === 'NOT_FOUND')) throw error;
      return htmlResult(404, <NotFoundPage />);
    }
  }
  const polls = Math.min(Number.parseInt(request.query.get('polls') ?? '0', 10) || 0, MAX_POLLS);
  const gaveUp = polls >= MAX_POLLS && isWaiting(project, subscription);
  // A portal link is made once the page stops polling, not on every poll.
  const manage =
    subscription?.has_access && (gaveUp || !isWaiting(project, subscription))
      ? await manageLink(context.teamId, subscription)
      : null;
  const next = new URLSearchParams(request.query);
  next.set('polls', String(polls + 1));
  const self = `${request.path}?${next.toString()}`;
  const part = <StatusPart self={self} project={project} subscription={subscription} manage={manage} gaveUp={gaveUp} />;
  if (request.htmx) return htmlResult(200, part);
  return htmlResult(
    200,
    <MemberPage title={`Welcome to ${project.name}`} site={project.name}>
      {part}
    </MemberPage>,
  );
}
