import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import { lowerCaseHeaders } from '../http/rest-pipeline.js';
import type { Runtime } from '../runtime.js';
import { TELEGRAM_HOOK_ROUTE, type HookRoute } from './routes.js';
import { handleTelegramUpdate, type HookAnswer } from './telegram.js';

/**
 * Serving inbound hooks (DESIGN §1, D22): public routes outside `/v1` that are not operations (no token,
 * no ability, no idempotency key: the provider's signature or secret and its event id play those parts).
 * On AWS each hook route has its own Lambda (`functions/<route>.ts` → {@link createHookHandler}); locally
 * the server sends every `/hooks/...` request to {@link serveHookRequest}. The Stripe hook joins
 * {@link HOOK_HANDLERS} with its route.
 */

/** Handles one verified-or-refused request of a hook route; never throws. */
export type HookHandler = (runtime: Runtime, request: { projectId: string; headers: Record<string, string>; body: string }) => Promise<HookAnswer>;

/** The handler of each hook route, by source. */
export const HOOK_HANDLERS: ReadonlyArray<{ route: HookRoute; handle: HookHandler }> = [
  { route: TELEGRAM_HOOK_ROUTE, handle: (runtime, request) => handleTelegramUpdate(runtime, { projectId: request.projectId, secretToken: request.headers['x-telegram-bot-api-secret-token'], body: request.body }) },
];

/** The path prefix of every hook route. */
export const HOOKS_PATH_PREFIX = '/hooks/';

/** A hook answer as an API Gateway result (JSON). */
function result(answer: HookAnswer, requestId: string): ApiGatewayResult {
  return { statusCode: answer.status, headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId }, body: JSON.stringify(answer.body) };
}

/** The raw body of an event as UTF-8 text. */
function rawBody(event: APIGatewayProxyEventV2): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/** The `{project_id}` of `path` under a route's path, or null when the path is not that route's. */
function projectIdOf(route: HookRoute, path: string): string | null {
  const prefix = route.path.slice(0, route.path.indexOf('{project_id}'));
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
    if (method !== route.method) return { ...result({ status: 405, body: { error: `Use ${route.method}.` } }, requestId), headers: { Allow: route.method, 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId } };
    return result(await handle(runtime, { projectId, headers: lowerCaseHeaders(event.headers), body: rawBody(event) }), requestId);
  }
  return result({ status: 404, body: { error: `No hook at ${path}.` } }, requestId);
}

/** The Lambda handler of one hook route on AWS (API Gateway passes `{project_id}` as a path parameter). */
export function createHookHandler(getRuntime: () => Runtime, source: HookRoute['source']) {
  const hook = HOOK_HANDLERS.find((candidate) => candidate.route.source === source);
  if (!hook) throw new Error(`No hook handler for ${source}`);
  return async (event: APIGatewayProxyEventV2): Promise<ApiGatewayResult> => {
    const requestId = event.requestContext?.requestId ?? 'unknown';
    const projectId = event.pathParameters?.project_id ?? '';
    return result(await hook.handle(getRuntime(), { projectId, headers: lowerCaseHeaders(event.headers), body: rawBody(event) }), requestId);
  };
}
