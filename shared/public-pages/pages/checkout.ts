import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { Plan } from '../../domain/plans/schema.js';
import type { PublicRequest } from '../http.js';
import { joinPage, type JoinContext } from './join.js';
import { ProblemError, toProblem } from '../../errors.js';

/** `POST /join/{project_id}/plans/{plan_id}` of a paid plan: starts a Stripe Checkout Session and answers 303 to it (DESIGN D26). */
export async function startPlanCheckout(request: PublicRequest, context: JoinContext, plan: Plan, formOrigins: readonly string[]): Promise<ApiGatewayResult> {
  return joinPage(request, context, formOrigins, toProblem(new ProblemError('CONFLICT', `Checkout of ${plan.name} is not available yet.`), request.requestId).problem);
}
