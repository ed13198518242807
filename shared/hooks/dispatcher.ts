import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import { lowerCaseHeaders } from '../http/rest-pipeline.js';
import type { Runtime } from '../runtime.js';
import { billingStripeHook } from './billing-stripe.js';
import { hookResult, rawBody, type HookHandler } from './hook.js';
import { discordHook } from './discord.js';
import {
  BILLING_STRIPE_HOOK_ROUTE,
  DISCORD_HOOK_ROUTE,
  STRIPE_HOOK_ROUTE,
  TELEGRAM_HOOK_ROUTE,
  type HookRoute,
} from './routes.js';
import { stripeHook } from './stripe.js';
import { telegramHook } from './telegram.js';

/**
 * Serving inbound hooks (DESIGN §1, D22): public routes outside `/v1` that are not operations (no token,
 * no ability, no idempotency key: the provider's signature or secret and its event id play those parts).
 * On AWS each hook route has its own Lambda (`functions/<route>.ts` → `createHookHandler` of `hook.ts`);
 * locally the server sends every `/hooks/...` request to {@link serveHookRequest}.
 */

/** The handler of each hook route (the local server serves them all; each Lambda imports only its own). */
const HOOK_HANDLERS: ReadonlyArray<{ route: HookRoute; handle: HookHandler }> = [
  { route: TELEGRAM_HOOK_ROUTE, handle: telegramHook },
  { route: DISCORD_HOOK_ROUTE, handle: discordHook },
  { route: STRIPE_HOOK_ROUTE, handle: stripeHook },
  { route: BILLING_STRIPE_HOOK_ROUTE, handle: billingStripeHook },
];

/** The path prefix of every hook route. */
export const HOOKS_PATH_PREFIX = '/hooks/';

/**
 * The `{project_id}` of `path` under a route's path ('' for a route without one), or null when the path is not that
 * route's.
 */
function projectIdOf(route: HookRoute, path: string): string | null {
  const parameter = route.path.indexOf('{project_id}');
  if (parameter < 0) return path === route.path ? '' : null;
  const prefix = route.path.slice(0, parameter);
  if (!path.startsWith(prefix)) return null;
  const rest = path.slice(prefix.length);
  return rest !== '' && !rest.includes('/') ? decodeURIComponent(rest) : null;
}

/**
 * Serves one request under `/hooks/` (the local server; DESIGN §5): the hook whose route matches method
 * and path, else 404 (`{ error }`, no problem document: these routes speak to providers, not API clients).
 */
export async function serveHookRequest(runtime: Runtime, event: APIGatewayProxyEventV2): Promise<ApiGatewayResult> {
  const requestId = event.requestContext?.requestId ?? 'local';
  const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
  const path = event.rawPath ?? '/';
  for (const { route, handle } of HOOK_HANDLERS) {
    const projectId = projectIdOf(route, path);
    if (projectId === null) continue;
    if (method !== route.method)
      return {
        ...hookResult({ status: 405, body: { error: `Use ${route.method}.` } }, requestId),
        headers: { Allow: route.method, 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId },
      };
    return hookResult(
      await handle(runtime, { projectId, headers: lowerCaseHeaders(event.headers), body: rawBody(event) }),
      requestId,
    );
  }
  return hookResult({ status: 404, body: { error: `No hook at ${path}.` } }, requestId);
}
