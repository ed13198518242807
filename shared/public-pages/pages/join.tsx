/** @jsx h */
import { IdempotencyField, ProblemView } from '../../web/components.js';
import { h, type Html } from '../../web/html.js';
import { formText } from '../../web/request.js';
import { htmlResult, redirectResult } from '../../web/results.js';
import { runPublicOperation } from '../operations.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { Project } from '../../domain/projects/schema.js';
import type { AccessCodeRedemption } from '../../domain/access-codes/schema.js';
import { ProblemError, toProblem, type ProblemDocument } from '../../errors.js';
import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formatPrice } from '../../schemas/common.js';
import { JOIN_PATH, joinCsrfToken, type PublicRequest } from '../http.js';
import { activePlans, type JoinContext } from '../join-context.js';
import { createWelcomeLink } from '../welcome-links.js';
import { DiscountCodeForm, joinOffer, offerApplies, OfferNotice, OfferPrice, type JoinOffer } from './join-offer.js';
import { MemberPage } from './layout.js';
import { SignInLinkForm } from './sign-in-link.js';
import { GiftForm } from './gift.js';

/**
 * The join page of a project (DESIGN D26): a free plan subscribes an e-mail once it is confirmed (`./free-join.tsx`), a
 * code is a D18 redemption (`?code=` pre-fills it), a Stripe-synced paid plan goes to Checkout or is bought as a gift
 * (D33, `./gift.tsx`), other paid plans show as unavailable. Writes run the registry's operations with the project's
 * `joinPrincipal`, activity surface `portal`.
 */

/**
 * How a plan can be joined: free (an e-mail), checkout (Stripe), or not at all (a paid plan without a synced provider
 * price).
 */
export function joinKind(project: Project, plan: Plan): 'free' | 'checkout' | 'unavailable' {
  if (plan.amount === 0) return 'free';
  const synced =
    project.payment_provider?.provider === 'stripe' &&
    plan.payment_provider === 'stripe' &&
    plan.provider_price_id !== null &&
    plan.sync_status === 'synced';
  return synced ? 'checkout' : 'unavailable';
}

const INTERVALS: Record<Plan['interval'], [string, string]> = {
  week: ['week', 'weeks'],
  month: ['month', 'months'],
  year: ['year', 'years'],
  one_time: ['', ''],
};

/**
 * A plan's price and period for people: "€9.00 per month", "€20.00 every 3 months", "€5.00 once, 30 days of access",
 * "Free".
 */
export function priceLabel(plan: Plan): string {
  const price = plan.amount === 0 ? 'Free' : formatPrice(plan.amount, plan.currency);
  if (plan.interval === 'one_time')
    return plan.amount === 0
      ? `${price}, ${plan.access_days ?? 1} days of access`
      : `${price} once, ${plan.access_days ?? 1} days of access`;
  if (plan.amount === 0) return price;
  const [one, many] = INTERVALS[plan.interval];
  return plan.interval_count === 1 ? `${price} per ${one}` : `${price} every ${plan.interval_count} ${many}`;
}

/** The CSRF field of a join form. */
function JoinCsrf(props: { token: string }): Html {
  return <input type="hidden" name="csrf_token" value={props.token} />;
}

/** An e-mail field with its label. */
function EmailField(props: { id: string }): Html {
  return (
    <div>
      <label for={props.id}>Your e-mail address</label>
      <input type="email" id={props.id} name="email" required maxlength="254" autocomplete="email" />
    </div>
  );
}

/** Whether joining `plan` starts a free trial (a recurring plan with trial days). */
const hasTrial = (plan: Plan) => plan.trial_days > 0 && plan.interval !== 'one_time';

/**
 * One plan as a card with its "Join" form (a free plan's and a trial's with the e-mail: one trial per address, D33), or
 * the note that it cannot be joined here.
 */
function PlanCard(props: { project: Project; plan: Plan; csrf: string; nowMs: number; offer: JoinOffer | null }): Html {
  const { project, plan } = props;
  const kind = joinKind(project, plan);
  const discounted = kind === 'checkout' && offerApplies(props.offer, plan) ? props.offer : null;
  const action = `${JOIN_PATH}/${project.id}/plans/${plan.id}`;
  return (
    <section class="card" aria-labelledby={`plan-${plan.id}`}>
      <h2 id={`plan-${plan.id}`}>{plan.name}</h2>
      {plan.description ? <p>{plan.description}</p> : ''}
      {discounted ? (
        <OfferPrice offer={discounted} plan={plan} fullPrice={priceLabel(plan)} />
      ) : (
        <p>
          <strong>{priceLabel(plan)}</strong>
          {hasTrial(plan) ? <span> · {plan.trial_days}-day free trial</span> : ''}
        </p>
      )}
      {kind === 'unavailable' ? (
        <p class="hint">Not available for sign-up here yet.</p>
      ) : (
        <form method="post" action={action}>
          <JoinCsrf token={props.csrf} />
          <IdempotencyField />
          {discounted ? <input type="hidden" name="promotion_code" value={discounted.code.code} /> : ''}
          {kind === 'free' || hasTrial(plan) ? <EmailField id={`email-${plan.id}`} /> : ''}
          <button type="submit">Join {plan.name}</button>
        </form>
      )}
      {kind === 'checkout' ? <GiftForm project={project} plan={plan} csrf={props.csrf} nowMs={props.nowMs} /> : ''}
    </section>
  );
}

/**
 * A trial checkout refused because the e-mail already had its trial (D33): the plan to offer without it, and to whom.
 */
export interface TrialRefusal {
  plan: Plan;
  email: string;
}

/** The message of a used trial, with a button that continues to the plan without its trial (same e-mail). */
function TrialUsedNotice(props: { project: Project; refusal: TrialRefusal; csrf: string }): Html {
  const { plan, email } = props.refusal;
  return (
    <div class="problem" role="alert">
      <strong>You have already had your free trial</strong>
      <p>
        {email} already had a free trial with {props.project.name}; there is one per person. You can still join{' '}
        {plan.name} without a trial: {priceLabel(plan)} from today.
      </p>
      <form method="post" action={`${JOIN_PATH}/${props.project.id}/plans/${plan.id}`}>
        <JoinCsrf token={props.csrf} />
        <IdempotencyField />
        <input type="hidden" name="email" value={email} />
        <input type="hidden" name="trial" value="false" />
        <button type="submit">Continue to {plan.name} without a trial</button>
      </form>
    </div>
  );
}

/** The join page's markup, with a problem of a failed join (or a used trial's offer) above the plans. */
function JoinView(props: {
  project: Project;
  plans: Plan[];
  csrf: string;
  nowMs: number;
  code: string;
  offer: JoinOffer | null;
  problem?: ProblemDocument;
  trialRefusal?: TrialRefusal;
}): Html {
  const { project } = props;
  const sold = props.plans.filter((plan) => joinKind(project, plan) === 'checkout');
  return (
    <MemberPage title={`Join ${project.name}`} site={project.name}>
      {props.problem ? <ProblemView problem={props.problem} /> : ''}
      {props.trialRefusal ? <TrialUsedNotice project={project} refusal={props.trialRefusal} csrf={props.csrf} /> : ''}
      {project.description ? <p>{project.description}</p> : ''}
      {sold.length > 0 ? <OfferNotice offer={props.offer} code={props.code} plans={sold} /> : ''}
      {sold.length > 0 ? <DiscountCodeForm project={project} code={props.offer?.code.code ?? ''} /> : ''}
      {props.plans.length === 0 ? (
        <p class="hint">There are no plans to join right now.</p>
      ) : (
        props.plans.map((plan) => (
          <PlanCard project={project} plan={plan} csrf={props.csrf} nowMs={props.nowMs} offer={props.offer} />
        ))
      )}
      <section class="card" aria-labelledby="code-heading">
        <h2 id="code-heading">Have a code?</h2>
        <form method="post" action={`${JOIN_PATH}/${project.id}/code`}>
          <JoinCsrf token={props.csrf} />
          <IdempotencyField />
          <div>
            <label for="code">Code</label>
            <input type="text" id="code" name="code" value={props.code} required maxlength="64" autocomplete="off" />
          </div>
          <EmailField id="code-email" />
          <button type="submit">Redeem</button>
        </form>
      </section>
      <SignInLinkForm
        action={`${JOIN_PATH}/${project.id}/sign-in-link`}
        csrf={props.csrf}
        heading="Already a member? Sign in"
      />
    </MemberPage>
  );
}

/**
 * `GET /join/{project_id}`: the join page (sets the CSRF cookie on a first visit); after a failed join, with its
 * problem, or a used trial's offer of the plan without it (409).
 */
export async function joinPage(
  request: PublicRequest,
  context: JoinContext,
  problem?: ProblemDocument,
  trialRefusal?: TrialRefusal,
): Promise<ApiGatewayResult> {
  const csrf = joinCsrfToken(request);
  const plans = await activePlans(context, request);
  const offer = await joinOffer(request, context.project, context.teamId);
  const status = problem ? (problem.status >= 500 ? 500 : problem.status) : trialRefusal ? 409 : 200;
  return htmlResult(
    status,
    <JoinView
      project={context.project}
      plans={plans}
      csrf={csrf.token}
      nowMs={request.runtime.clock.nowMs()}
      code={offer ? '' : (request.query.get('code') ?? '').slice(0, 64)}
      offer={offer}
      problem={problem}
      trialRefusal={trialRefusal}
    />,
    csrf.cookies,
  );
}

/**
 * The welcome page (303) of subscription `subscriptionId` a free or code join created: a fresh welcome link to it
 * (`awaitingConfirmation`: a free join's before its address is confirmed, which only says "Check your inbox").
 */
export async function toWelcome(
  request: PublicRequest,
  context: JoinContext,
  subscriptionId: string,
  options: { awaitingConfirmation?: boolean } = {},
): Promise<ApiGatewayResult> {
  const token = await createWelcomeLink(request.runtime.store, request.runtime.clock, {
    teamId: context.teamId,
    projectId: context.project.id,
    subscriptionId,
    awaitingConfirmation: options.awaitingConfirmation,
  });
  const query = new URLSearchParams({ subscription: subscriptionId, t: token });
  return redirectResult(`${JOIN_PATH}/${context.project.id}/welcome?${query}`);
}

/**
 * `POST /join/{project_id}/plans/{plan_id}`: a free plan goes to `free` (the join confirmed by e-mail,
 * `./free-join.tsx`), a paid plan to `checkout` (Stripe Checkout); an unavailable, inactive or unknown plan answers the
 * join page with the problem.
 */
export async function joinPlan(
  request: PublicRequest,
  context: JoinContext,
  planId: string,
  routes: { checkout: (plan: Plan) => Promise<ApiGatewayResult>; free: (plan: Plan) => Promise<ApiGatewayResult> },
): Promise<ApiGatewayResult> {
  const plan = (await activePlans(context, request)).find((candidate) => candidate.id === planId);
  if (!plan)
    return joinPage(request, context, problemOf('NOT_FOUND', 'This plan is not open for sign-up.', request.requestId));
  const kind = joinKind(context.project, plan);
  if (kind === 'checkout') return routes.checkout(plan);
  if (kind === 'unavailable')
    return joinPage(request, context, problemOf('CONFLICT', 'This plan cannot be joined here yet.', request.requestId));
  return routes.free(plan);
}

/**
 * `POST /join/{project_id}/code`: redeems the code (DESIGN D18) for a new subscriber with the e-mail, then shows the
 * welcome page.
 */
export async function redeemCode(request: PublicRequest, context: JoinContext): Promise<ApiGatewayResult> {
  const email = formText(request.form, 'email');
  const redemption = await runPublicOperation<AccessCodeRedemption>(
    request,
    context.principal,
    'redeemAccessCode',
    { project_id: context.project.id, code: formText(request.form, 'code') ?? '', subscriber: email ? { email } : {} },
    request.form.get('idempotency_key') ?? undefined,
  );
  if (!redemption.ok) return joinPage(request, context, redemption.problem);
  return toWelcome(request, context, redemption.result.subscription.id);
}

/** A problem document for a join page message (no operation made it). */
function problemOf(code: 'NOT_FOUND' | 'CONFLICT', detail: string, requestId: string): ProblemDocument {
  return toProblem(new ProblemError(code, detail), requestId).problem;
}
