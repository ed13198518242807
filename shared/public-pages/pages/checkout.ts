import type { ApiGatewayResult } from '../../http/api-gateway.js';
import { formText } from '../../web/request.js';
import { redirectResult } from '../../web/results.js';
import { runPublicOperation } from '../operations.js';
import { isTrialUsed } from '../../domain/checkout-sessions/checkout.js';
import type { CheckoutSession } from '../../domain/checkout-sessions/schema.js';
import type { Plan } from '../../domain/plans/schema.js';
import { JOIN_PATH, type PublicRequest } from '../http.js';
import type { JoinContext } from '../join-context.js';
import { joinPage } from './join.js';

/**
 * `POST /join/{project_id}/plans/{plan_id}` of a paid plan (DESIGN D26): runs `createCheckoutSession` (a
 * Stripe Checkout Session of the synced price, metadata naming the project and plan) as the join principal,
 * with the welcome page as `success_url` and the join page as `cancel_url`, and answers 303 to Stripe's page.
 * The form's idempotency key makes a double submit lead to the same checkout. A trial plan's form carries the buyer's
 * e-mail (checked for its one trial per project, D33, before Stripe); `trial=false` buys the plan without its trial. A
 * used trial shows the join page offering the plan without it; any other refusal, the join page with the problem.
 */
export async function startPlanCheckout(
  request: PublicRequest,
  context: JoinContext,
  plan: Plan,
): Promise<ApiGatewayResult> {
  const origin = request.relyingParty.origin;
  const joinUrl = `${origin}${JOIN_PATH}/${context.project.id}`;
  const promotionCode = formText(request.form, 'promotion_code');
  const email = formText(request.form, 'email');
  const trial = request.form.get('trial') !== 'false';
  const outcome = await runPublicOperation<CheckoutSession>(
    request,
    context.principal,
    'createCheckoutSession',
    {
      id: plan.id,
      success_url: `${joinUrl}/welcome?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: joinUrl,
      ...(promotionCode ? { promotion_code: promotionCode } : {}),
      ...(email ? { customer_email: email } : {}),
      ...(trial ? {} : { trial: false }),
    },
    request.form.get('idempotency_key') ?? undefined,
  );
  if (!outcome.ok && email && isTrialUsed(outcome.problem))
    return joinPage(request, context, undefined, { plan, email });
  if (!outcome.ok) return joinPage(request, context, outcome.problem);
  return redirectResult(outcome.result.url);
}
