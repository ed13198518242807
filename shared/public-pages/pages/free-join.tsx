/** @jsx h */
import { ProblemView } from '../../web/components.js';
import { h, type Html } from '../../web/html.js';
import { formText } from '../../web/request.js';
import { htmlResult } from '../../web/results.js';
import { runPublicOperation } from '../operations.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Subscription } from '../../domain/subscriptions/schema.js';
import type { ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { consumeRateLimit } from '../../limits/rate-limit.js';
import { JOIN_PATH, type PublicRequest } from '../http.js';
import type { JoinContext } from '../join-context.js';
import { joinPage, toWelcome } from './join.js';
import { MemberPage } from './layout.js';

/**
 * A free plan's join (DESIGN D26) confirmed by e-mail: the form spends one unit of the project's `free-joins` limit
 * (429 with `Retry-After` past it, as the per-IP limit answers), then `joinFreePlan` makes an incomplete subscription
 * and e-mails its one-time link; the welcome page says "Check your inbox". Opening the link (`GET …/confirm?token=`)
 * runs `confirmFreeJoin` and lands on the welcome page of the now active membership.
 */

/** What a free join's welcome page and an answer without one say, whatever the address. */
export function CheckInbox(): Html {
  return (
    <div id="welcome-status" class="card" aria-live="polite">
      <p role="status">
        Check your inbox: we sent a link to the address you gave. Open it within 23 hours to confirm the address and
        start your membership; nothing starts without it.
      </p>
      <p class="hint">
        Nothing arrived? Look in your spam folder, or join again in a few minutes to get a new link. If you already
        opened it, the page it opened shows how to get in.
      </p>
    </div>
  );
}

/** The "Check your inbox" page of project `site`. */
export function CheckInboxPage(props: { site: string }): Html {
  return (
    <MemberPage title="Check your inbox" site={props.site}>
      <CheckInbox />
    </MemberPage>
  );
}

/**
 * `POST /join/{project_id}/plans/{plan_id}` of free `plan`: the project's join limit, then `joinFreePlan`; answers the
 * welcome page that says "Check your inbox" (the same page when nothing was sent), or the join page with the problem.
 */
export async function joinFreePlanPage(
  request: PublicRequest,
  context: JoinContext,
  plan: Plan,
): Promise<ApiGatewayResult> {
  const { store, clock } = request.runtime;
  await consumeRateLimit(store, clock, 'free-joins', context.project.id);
  const joined = await runPublicOperation<{ subscription_id: string | null }>(
    request,
    context.principal,
    'joinFreePlan',
    { project_id: context.project.id, plan_id: plan.id, email: formText(request.form, 'email') },
    request.form.get('idempotency_key') ?? undefined,
  );
  if (!joined.ok) return joinPage(request, context, joined.problem);
  const subscriptionId = joined.result.subscription_id;
  if (!subscriptionId) return htmlResult(200, <CheckInboxPage site={context.project.name} />);
  return toWelcome(request, context, subscriptionId, { awaitingConfirmation: true });
}

/** A confirmation link that did not confirm: its problem and the way back to the join page. */
function ConfirmationRefused(props: { problem: ProblemDocument; joinPath: string; site: string }): Html {
  return (
    <MemberPage title="This link cannot be used" site={props.site}>
      <ProblemView problem={props.problem} />
      <p>
        <a class="button" href={props.joinPath}>
          Back to the join page
        </a>
      </p>
    </MemberPage>
  );
}

/**
 * `GET /join/{project_id}/confirm?token=`: runs `confirmFreeJoin` and answers the welcome page of the active
 * membership (303), or the refusal (404 for an unusable link, 409 for an expired join, 402 for a full team).
 */
export async function confirmJoinPage(request: PublicRequest, context: JoinContext): Promise<ApiGatewayResult> {
  const confirmed = await runPublicOperation<Subscription>(request, context.principal, 'confirmFreeJoin', {
    project_id: context.project.id,
    token: (request.query.get('token') ?? '').slice(0, 200),
  });
  if (confirmed.ok) return toWelcome(request, context, confirmed.result.id);
  const joinPath = `${JOIN_PATH}/${context.project.id}`;
  return htmlResult(
    confirmed.problem.status,
    <ConfirmationRefused problem={confirmed.problem} joinPath={joinPath} site={context.project.name} />,
  );
}
