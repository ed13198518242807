import type { Handler } from 'hono';
import { ProblemError, toProblem } from '../errors.js';
import { logger } from '../logger.js';
import type { Runtime } from '../runtime.js';
import { createWebApp, type WebEnv } from '../web/app.js';
import { csrfRefusal, hasDoubleSubmitToken, originCheck } from '../web/csrf.js';
import { securityHeaders } from '../web/headers.js';
import { limitPerClientIp } from '../web/rate-limit.js';
import { lambdaHandler } from '../web/lambda.js';
import { readWebRequest } from '../web/request.js';
import { toResponse } from '../web/results.js';
import { signedIn, signInReturnPath } from './access.js';
import type { Asset } from './assets.js';
import {
  assetResult,
  clearedSessionCookie,
  DASHBOARD_PATH,
  hasValidCsrfToken,
  jsonResult,
  PRESESSION_CSRF_COOKIE,
  redirectResult,
  SESSION_COOKIE,
} from './http.js';
import type { DashboardRoute } from './routes/route.js';

/**
 * The dashboard (DESIGN D21) on the web layer (D35), all under `/dashboard`: static files, then the route
 * groups' tables (`./routes/`), each page loaded on first use. Public routes (sign-in, sign-in links,
 * invitations, the passkey sign-in ceremony) run for anyone; the others need a live session cookie, an active
 * member and — for every POST — the session's CSRF token. A session started from a sign-in link may only
 * register a passkey (and sign out) until it has one.
 */

/** A route path in Hono's syntax: each `:name` is an id (1–80 of `A-Za-z0-9_-`). */
const honoPath = (path: string) => `${DASHBOARD_PATH}${path.replace(/:(\w+)/g, ':$1{[A-Za-z0-9_-]{1,80}}')}`;

/** The 404 of a path no page serves: a problem for JSON clients, a line of text otherwise. */
function notFound(request: { method: string; path: string; accept?: string }, requestId: string): Response {
  const { problem } = toProblem(
    new ProblemError('NOT_FOUND', `No dashboard page ${request.method} ${request.path}.`),
    requestId,
  );
  if (request.accept?.includes('application/json')) return toResponse(jsonResult(404, problem));
  return new Response(`${problem.detail}\n`, {
    status: 404,
    headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
  });
}

/**
 * One route's handler: the pre-session token of a form posted before sign-in; for other routes a live session
 * (else the sign-in page, or 401 for JSON), the session's CSRF token on POST (else CSRF_TOKEN_INVALID, 403)
 * and a registered passkey; then the page.
 */
function serve(route: DashboardRoute): Handler<WebEnv> {
  return async (c) => {
    const request = await readWebRequest(c);
    const params = c.req.param() as Record<string, string>;
    if (route.access === 'public' && route.presessionForm && !hasDoubleSubmitToken(request, PRESESSION_CSRF_COOKIE))
      throw csrfRefusal('This request did not come from this site’s own form; nothing was changed.');
    if (route.access === 'public') {
      const page = await route.page(params);
      return page
        ? toResponse(await page(request, params))
        : notFound({ ...request, accept: request.headers.accept }, request.requestId);
    }
    const viewer = await signedIn(request);
    if (!viewer) {
      if (request.headers['content-type']?.startsWith('application/json'))
        return toResponse(
          jsonResult(
            401,
            toProblem(new ProblemError('AUTHENTICATION_REQUIRED', 'Sign in to the dashboard first.'), request.requestId)
              .problem,
            [clearedSessionCookie()],
          ),
        );
      // A page opened without a session (a bookmark, the OAuth consent page) comes back after sign-in.
      const returnTo = request.method === 'GET' ? signInReturnPath(request) : null;
      return toResponse(
        redirectResult(
          `${DASHBOARD_PATH}/sign-in${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`,
          request.cookies[SESSION_COOKIE] ? [clearedSessionCookie()] : undefined,
        ),
      );
    }
    if (request.method === 'POST' && !hasValidCsrfToken(request, viewer.session))
      throw new ProblemError(
        'CSRF_TOKEN_INVALID',
        'This request did not carry the CSRF token of your session; nothing was changed.',
      );
    if (route.access === 'signed-in' && viewer.session.state === 'registration')
      return toResponse(redirectResult(`${DASHBOARD_PATH}/passkeys/new`));
    const page = await route.page(params);
    return page
      ? toResponse(await page(viewer, params))
      : notFound({ ...request, accept: request.headers.accept }, request.requestId);
  };
}

/**
 * What one dashboard app serves: its route groups' routes and, in the app that serves them, the static files by name
 * (`assetNamed` of `./assets.js`; D23: only that Lambda carries the vendor scripts).
 */
export interface DashboardAppContent {
  readonly routes: readonly DashboardRoute[];
  readonly assets?: (name: string) => Asset | null;
}

/**
 * The dashboard's app over `getRuntime` (called per request). A POST from another site is refused before
 * anything runs (login CSRF included). Never throws: an unexpected failure is logged and answered 500 without
 * details.
 */
export function createDashboardApp(getRuntime: () => Runtime, content: DashboardAppContent) {
  const app = createWebApp(getRuntime);
  app.use(securityHeaders({ referrerPolicy: 'same-origin', content: 'page', inlineStyles: true }));
  app.use(originCheck());
  const { assets } = content;
  if (assets)
    app.get(`${DASHBOARD_PATH}/assets/:name{[a-z0-9.-]+}`, (c) => {
      const file = assets(c.req.param('name'));
      if (!file)
        return notFound({ method: 'GET', path: c.req.path, accept: c.req.header('accept') }, c.get('requestId'));
      return toResponse(assetResult(file.body, file.contentType));
    });
  // The pages before sign-in count in the public pages' per-IP bucket (D4, D26), as the join and portal pages do.
  const publicPageLimit = limitPerClientIp('public-pages');
  for (const route of content.routes)
    if (route.access === 'public') app.on(route.method, honoPath(route.path), publicPageLimit, serve(route));
    else app.on(route.method, honoPath(route.path), serve(route));
  app.notFound((c) =>
    notFound({ method: c.req.method, path: c.req.path, accept: c.req.header('accept') }, c.get('requestId')),
  );
  app.onError(async (error, c) => {
    const { problem, headers } = toProblem(error, c.get('requestId'));
    if (!(error instanceof ProblemError))
      logger.error('dashboard request failed', { request_id: c.get('requestId'), path: c.req.path, error });
    // A browser's navigation or form post gets a page; scripts (fetch, htmx) and API clients the problem document.
    const response = c.req.header('accept')?.includes('text/html')
      ? toResponse((await import('./problem-page.js')).problemPage(problem.title, problem))
      : toResponse(jsonResult(problem.status, problem));
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value); // Retry-After of a 429
    return response;
  });
  return app;
}

/** The handler of one of the dashboard's Lambdas (DESIGN D21; its area in `./areas.ts`). */
export function createDashboardHandler(getRuntime: () => Runtime, content: DashboardAppContent) {
  return lambdaHandler(createDashboardApp(getRuntime, content));
}
