import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { decodeRequest, htmlResult, isCrossSiteRequest } from '../dashboard/http.js';
import { ProblemError, toProblem } from '../errors.js';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import { integrationsOf } from '../integrations.js';
import { consumeRateLimit } from '../limits/rate-limit.js';
import { logger } from '../logger.js';
import type { Runtime } from '../runtime.js';
import { hasJoinCsrf, JOIN_PATH, originOf, publicResult, type PublicRequest } from './http.js';
import { startPlanCheckout } from './pages/checkout.js';
import { joinContext, joinPage, joinPlan, redeemCode, type JoinContext } from './pages/join.js';
import { ErrorPage, NotFoundPage } from './pages/layout.js';
import { portalManageLink, PORTAL_ROUTES } from './pages/portal.js';
import { welcomePage } from './pages/welcome.js';

/**
 * The public pages' routes (DESIGN D26, D27): the join pages under `/join/{project_id}` and the subscriber
 * portal under `/portal/{project_id}`. Every request first spends one unit of the client IP's
 * `public-pages` rate limit (429 past it); every join form POST must carry the join CSRF token (403
 * without it), every portal POST the session's. "No such project", "not yours" and an unusable link all
 * answer the same 404 page. Every answer carries the public security headers (`publicResult`).
 */

const UUID = '([0-9a-fA-F-]{36})';
const JOIN_ROUTES: ReadonlyArray<{
  method: 'GET' | 'POST';
  pattern: RegExp;
  handle: (
    request: PublicRequest,
    context: JoinContext,
    match: RegExpExecArray,
    formOrigins: readonly string[],
  ) => Promise<ApiGatewayResult>;
}> = [
  {
    method: 'GET',
    pattern: new RegExp(`^${JOIN_PATH}/${UUID}/?$`),
    handle: (request, context, _match, origins) => joinPage(request, context, origins),
  },
  {
    method: 'POST',
    pattern: new RegExp(`^${JOIN_PATH}/${UUID}/plans/${UUID}/?$`),
    handle: (request, context, match, origins) =>
      joinPlan(request, context, match[2].toLowerCase(), origins, (plan) =>
        startPlanCheckout(request, context, plan, origins),
      ),
  },
  {
    method: 'POST',
    pattern: new RegExp(`^${JOIN_PATH}/${UUID}/code/?$`),
    handle: (request, context, _match, origins) => redeemCode(request, context, origins),
  },
  {
    method: 'GET',
    pattern: new RegExp(`^${JOIN_PATH}/${UUID}/welcome/?$`),
    handle: (request, context) => welcomePage(request, context, portalManageLink(request)),
  },
];

/**
 * The origins a public form may lead to beyond Stripe's own hosted pages: Stripe's billing portal and,
 * when the service talks to another Stripe API (a local or test fake), that API's origin, whose hosted
 * pages live beside it.
 */
function providerOrigins(runtime: Runtime): string[] {
  const api = originOf(integrationsOf(runtime).stripeApiBaseUrl);
  return ['https://billing.stripe.com', ...(api && api !== 'https://api.stripe.com' ? [api] : [])];
}

const notFound = () => publicResult(htmlResult(404, NotFoundPage()));

/** Serves one public-page request (the local server and the public pages' Lambda); never throws. */
export async function handlePublicRequest(runtime: Runtime, event: APIGatewayProxyEventV2): Promise<ApiGatewayResult> {
  const requestId = event.requestContext?.requestId ?? randomUUID();
  const request: PublicRequest = {
    ...decodeRequest(runtime, event, requestId),
    ip: event.requestContext?.http?.sourceIp || 'unknown',
  };
  const origins = providerOrigins(runtime);
  try {
    await consumeRateLimit(runtime.store, runtime.clock, 'public-pages', request.ip);
    if (request.method === 'POST' && isCrossSiteRequest(request)) return forbidden(requestId);
    const joinRoute = JOIN_ROUTES.map((route) => ({
      route,
      match: route.method === request.method ? route.pattern.exec(request.path) : null,
    })).find((candidate) => candidate.match);
    if (joinRoute?.match) {
      if (request.method === 'POST' && !hasJoinCsrf(request)) return forbidden(requestId);
      const context = await joinContext(request, joinRoute.match[1].toLowerCase());
      if (!context) return notFound();
      return await joinRoute.route.handle(request, context, joinRoute.match, origins);
    }
    for (const route of PORTAL_ROUTES) {
      const match = route.method === request.method ? route.pattern.exec(request.path) : null;
      if (match) return await route.handle(request, match, origins);
    }
    return notFound();
  } catch (error) {
    const { problem, headers } = toProblem(error, requestId);
    if (!(error instanceof ProblemError))
      logger.error('public page failed', { request_id: requestId, path: request.path, error: error as Error });
    const result = publicResult(htmlResult(problem.status, ErrorPage({ problem })));
    return { ...result, headers: { ...result.headers, ...headers } };
  }
}

/** The 403 of a form without its CSRF token: nothing was changed. */
function forbidden(requestId: string): ApiGatewayResult {
  const { problem } = toProblem(
    new ProblemError(
      'CSRF_TOKEN_INVALID',
      'This form did not carry its security token; nothing was changed. Open the page again and resubmit.',
    ),
    requestId,
  );
  return publicResult(htmlResult(403, ErrorPage({ problem })));
}

/** The public pages' Lambda handler (DESIGN D26: its own Lambda behind the REST API at `/join` and `/portal`). `getRuntime` is called per invocation. */
export function createPublicPagesHandler(getRuntime: () => Runtime) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>().handler(async (event) =>
    handlePublicRequest(getRuntime(), event),
  );
}
