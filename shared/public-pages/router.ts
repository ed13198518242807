import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { Context, Handler } from 'hono';
import { ProblemError, toProblem } from '../errors.js';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import { integrationsOf } from '../integrations.js';
import { logger } from '../logger.js';
import type { Runtime } from '../runtime.js';
import { createWebApp, type WebEnv } from '../web/app.js';
import { originCheck, csrfRefusal } from '../web/csrf.js';
import { securityHeaders } from '../web/headers.js';
import { lambdaHandler, serveEvent } from '../web/lambda.js';
import { limitPerClientIp } from '../web/rate-limit.js';
import { readWebRequest } from '../web/request.js';
import { htmlResult, toResponse } from '../web/results.js';
import { UNSUBSCRIBE_PATH } from '../domain/messages/paths.js';
import { hasJoinCsrf, joinCsrfToken, JOIN_PATH, originOf, PORTAL_PATH, type PublicRequest } from './http.js';
import { startPlanCheckout } from './pages/checkout.js';
import { confirmJoinPage, joinFreePlanPage } from './pages/free-join.js';
import { giftReceiptPage, startGiftPurchase } from './pages/gift.js';
import { joinContext, type JoinContext } from './join-context.js';
import { joinPage, joinPlan, redeemCode } from './pages/join.js';
import { ErrorPage, NotFoundPage } from './pages/layout.js';
import { portalManageLink, PORTAL_ROUTES } from './pages/portal.js';
import { requestSignInLinkPage } from './pages/sign-in-link.js';
import { unsubscribe, unsubscribePage } from './pages/unsubscribe.js';
import { welcomePage } from './pages/welcome.js';

/**
 * The public pages (DESIGN D26, D27, D32) on the web layer: the join pages under `/join/{project_id}`, the
 * subscriber portal under `/portal/{project_id}` and the unsubscribe page. Every request first spends one unit of the
 * client IP's `public-pages` limit (429 past it); a form POST from another site is refused (403), every join form POST
 * must carry the join CSRF token (403 without it), every portal POST the session's (or, signed out, the portal's
 * double-submit token). The one exception is the RFC 8058 one-click unsubscribe POST (see `./pages/unsubscribe.tsx`).
 * "No such project", "not yours" and an unusable link all answer the same 404 page. Every answer carries the header
 * policy.
 */

/** Where Stripe hosts its Checkout pages: a join form's 303 leads there, so `form-action` allows it. */
const STRIPE_CHECKOUT_ORIGIN = 'https://checkout.stripe.com';

/**
 * The origins a public form may lead to: Stripe's Checkout and billing portal and, when the service talks to
 * another Stripe API (a local or test fake), that API's origin, whose hosted pages live beside it.
 */
function formOrigins(runtime: Runtime): string[] {
  const api = originOf(integrationsOf(runtime).stripeApiBaseUrl);
  return [
    STRIPE_CHECKOUT_ORIGIN,
    'https://billing.stripe.com',
    ...(api && api !== 'https://api.stripe.com' ? [api] : []),
  ];
}

const UUID = '{[0-9a-fA-F-]{36}}';
type PublicEnv = WebEnv;

const notFound = () => toResponse(htmlResult(404, NotFoundPage()));

/** A join route: its CSRF token on POST, then the project's join context (404 without one), then `handle`. */
function joinRoute(
  handle: (request: PublicRequest, context: JoinContext, c: Context<PublicEnv>) => Promise<ApiGatewayResult>,
): Handler<PublicEnv> {
  return async (c) => {
    const request = await readWebRequest(c);
    if (request.method === 'POST' && !hasJoinCsrf(request))
      throw csrfRefusal('This form did not carry its security token; nothing was changed.');
    const context = await joinContext(request, c.req.param('project')!.toLowerCase());
    if (!context) return notFound();
    return toResponse(await handle(request, context, c));
  };
}

/** The public pages' app over `getRuntime` (called per request). */
export function createPublicPagesApp(getRuntime: () => Runtime) {
  const app = createWebApp(getRuntime);
  app.use(
    securityHeaders({
      referrerPolicy: 'no-referrer',
      content: 'page',
      formOrigins: (c) => formOrigins(c.get('runtime')),
    }),
  );
  app.use(limitPerClientIp('public-pages'));
  app.use(originCheck());
  const join = `${JOIN_PATH}/:project${UUID}`;
  app.get(
    join,
    joinRoute((request, context) => joinPage(request, context)),
  );
  app.post(
    `${join}/plans/:plan${UUID}`,
    joinRoute((request, context, c) =>
      joinPlan(request, context, c.req.param('plan')!.toLowerCase(), {
        checkout: (plan) => startPlanCheckout(request, context, plan),
        free: (plan) => joinFreePlanPage(request, context, plan),
      }),
    ),
  );
  app.post(
    `${join}/plans/:plan${UUID}/gift`,
    joinRoute((request, context, c) => startGiftPurchase(request, context, c.req.param('plan')!.toLowerCase())),
  );
  app.get(
    `${join}/gifts/:gift${UUID}`,
    joinRoute((request, context, c) => giftReceiptPage(request, context, c.req.param('gift')!.toLowerCase())),
  );
  app.get(
    `${join}/confirm`,
    joinRoute((request, context) => confirmJoinPage(request, context)),
  );
  app.post(
    `${join}/code`,
    joinRoute((request, context) => redeemCode(request, context)),
  );
  app.post(
    `${join}/sign-in-link`,
    joinRoute((request, context) =>
      requestSignInLinkPage(request, context.project.id, context, {
        action: `${JOIN_PATH}/${context.project.id}/sign-in-link`,
        csrf: joinCsrfToken(request).token,
      }),
    ),
  );
  app.get(UNSUBSCRIBE_PATH, async (c) => toResponse(unsubscribePage(await readWebRequest(c))));
  app.post(UNSUBSCRIBE_PATH, async (c) => toResponse(await unsubscribe(await readWebRequest(c))));
  app.get(
    `${join}/welcome`,
    joinRoute((request, context) => welcomePage(request, context, portalManageLink(request))),
  );
  for (const route of PORTAL_ROUTES)
    app.on(route.method, `${PORTAL_PATH}${route.path}`, async (c) => {
      const request = await readWebRequest(c);
      const { project, subscription } = c.req.param() as { project: string; subscription?: string };
      return toResponse(await route.handle(request, [request.path, project, ...(subscription ? [subscription] : [])]));
    });
  app.notFound(notFound);
  app.onError((error, c) => {
    const { problem, headers } = toProblem(error, c.get('requestId'));
    if (!(error instanceof ProblemError))
      logger.error('public page failed', { request_id: c.get('requestId'), path: c.req.path, error });
    const response = toResponse(htmlResult(problem.status, ErrorPage({ problem })));
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  });
  return app;
}

const apps = new WeakMap<Runtime, ReturnType<typeof createPublicPagesApp>>();

/** The public pages' app of `runtime` (one per runtime: the local server's, a test's). */
export function publicPagesApp(runtime: Runtime): ReturnType<typeof createPublicPagesApp> {
  let app = apps.get(runtime);
  if (!app) apps.set(runtime, (app = createPublicPagesApp(() => runtime)));
  return app;
}

/** Serves one public-page API Gateway v2 event in process, as the Lambda does; never throws. */
export function handlePublicRequest(runtime: Runtime, event: APIGatewayProxyEventV2): Promise<ApiGatewayResult> {
  return serveEvent(publicPagesApp(runtime), event);
}

/** The public pages' Lambda handler (DESIGN D26: its own Lambda behind the REST API at `/join` and `/portal`). */
export function createPublicPagesHandler(getRuntime: () => Runtime) {
  return lambdaHandler(createPublicPagesApp(getRuntime));
}
