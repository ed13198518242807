import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { z } from 'zod';
import { recordActivity } from '../activity.js';
import { requireAbility } from '../auth/authorize.js';
import { authenticate, type Principal } from '../auth/tokens.js';
import { ProblemError, fieldErrors, toProblem } from '../errors.js';
import { beginIdempotentRequest, parseIdempotencyKey, requestFingerprint, type IdempotencyClaim, type StoredResponse } from '../limits/idempotency.js';
import { consumeRateLimit, rateLimitHeaders, type RateLimitState } from '../limits/rate-limit.js';
import type { Runtime } from '../runtime.js';
import { OPERATIONS } from './operations.js';
import { matchRoute, type OperationId, type RouteDefinition } from './route-table.js';

/** Largest accepted request body, in bytes (256 KiB). Larger bodies get PAYLOAD_TOO_LARGE (413). */
export const MAX_BODY_BYTES = 256 * 1024;

type Result = APIGatewayProxyStructuredResultV2 & { statusCode: number; headers: Record<string, string>; body: string };

/** Options of {@link handleRestRequest}. */
export interface RestHandlerOptions {
  /** On AWS each route has its own Lambda: the operation it serves. Other routes get NOT_FOUND. */
  operationId?: string;
  /** Called once per request after the response is known (the local server logs a line). */
  onResponse?: (line: { method: string; path: string; status: number; duration_ms: number; request_id: string; operation: string | null }) => void;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Result {
  return { statusCode: status, headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) };
}

function validate<T extends z.ZodType>(schema: T | undefined, value: unknown, prefix: string): z.infer<T> | Record<string, never> {
  if (!schema) {
    if (value && typeof value === 'object' && Object.keys(value).length > 0 && prefix === 'query') {
      throw new ProblemError('VALIDATION_FAILED', 'This operation takes no query parameters.', {
        errors: Object.keys(value).map((key) => ({ path: `query.${key}`, message: 'Unknown parameter.' })),
      });
    }
    return {};
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new ProblemError('VALIDATION_FAILED', `The request ${prefix} is not valid.`, { errors: fieldErrors(prefix, parsed.error.issues) });
  return parsed.data;
}

function rawBodyOf(event: APIGatewayProxyEventV2): string {
  if (!event.body) return '';
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (raw.byteLength > MAX_BODY_BYTES) throw new ProblemError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
  return raw.toString('utf8');
}

/** Parses and validates a JSON body (D1): wrong content type → 415, malformed JSON / schema → 422. */
function parseBody(route: RouteDefinition, event: APIGatewayProxyEventV2, raw: string): unknown {
  if (!route.body) return undefined;
  if (raw.trim() === '') return validate(route.body, {}, 'body');
  const contentType = event.headers['content-type'] ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with `Content-Type: application/json`.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ProblemError('VALIDATION_FAILED', 'The request body is not valid JSON.', { errors: [{ path: 'body', message: (error as Error).message }] });
  }
  return validate(route.body, parsed, 'body');
}

/**
 * Serves one REST request given as an API Gateway HTTP API (v2) event, in the order every route shares
 * (DESIGN D1–D4): route match (404/405) → authenticate (401) → `rest` rate limit (429) → the route's
 * ability (403) → path, query, `Idempotency-Key` and body validation (422/413/415) → idempotency claim
 * (replay, 409, 422) → the operation → problem documents for any failure. Every write made with a
 * token is recorded in the activity log, whatever its outcome. Never throws.
 */
export async function handleRestRequest(runtime: Runtime, event: APIGatewayProxyEventV2, options: RestHandlerOptions = {}): Promise<Result> {
  const started = performance.now();
  const requestId = event.requestContext?.requestId || randomUUID();
  const method = event.requestContext.http.method.toUpperCase();
  const path = event.rawPath;
  let principal: Principal | null = null;
  let rate: RateLimitState | null = null;
  let route: RouteDefinition | null = null;
  let claim: IdempotencyClaim | null = null;
  let response: Result;
  try {
    const match = matchRoute(method, path);
    if (!match || ('route' in match && options.operationId && match.route.operationId !== options.operationId)) {
      throw new ProblemError('NOT_FOUND', `No route ${method} ${path}.`);
    }
    if ('allowedMethods' in match) {
      throw new ProblemError('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}.`, { headers: { Allow: match.allowedMethods.join(', ') } });
    }
    route = match.route;
    if (route.ability) {
      principal = await authenticate(runtime.store, event.headers.authorization);
      rate = await consumeRateLimit(runtime.store, runtime.clock, 'rest', principal.tokenId);
      requireAbility(principal, route.ability);
    }
    const params = validate(route.params, match.pathParameters, 'path') as Record<string, string>;
    const query = validate(route.query, event.queryStringParameters ?? {}, 'query') as Record<string, unknown>;
    const isWrite = method !== 'GET';
    const idempotencyKey = isWrite ? parseIdempotencyKey(event.headers['idempotency-key'], 'header.idempotency-key') : null;
    const raw = isWrite ? rawBodyOf(event) : '';
    const body = parseBody(route, event, raw);
    if (idempotencyKey && principal) {
      claim = await beginIdempotentRequest(runtime.store, runtime.clock, principal.teamId, idempotencyKey, requestFingerprint([method, path, event.rawQueryString ?? '', raw]));
      if (claim.kind === 'replay') {
        const stored = claim.response;
        claim = null;
        response = { statusCode: stored.status, headers: { ...stored.headers, 'Idempotent-Replay': 'true' }, body: stored.body };
        return response;
      }
    }
    const result = await OPERATIONS[route.operationId as OperationId]({ runtime, principal, params, query, body });
    response = json(route.successStatus, result);
    if (claim?.kind === 'claimed') {
      const stored: StoredResponse = { status: response.statusCode, headers: { ...response.headers }, body: response.body };
      await claim.complete(stored);
      claim = null;
    }
    return response;
  } catch (error) {
    if (claim?.kind === 'claimed') await claim.release().catch(() => undefined);
    if (!(error instanceof ProblemError)) console.error(JSON.stringify({ level: 'error', request_id: requestId, message: (error as Error)?.message, stack: (error as Error)?.stack }));
    const { problem, headers } = toProblem(error, requestId);
    response = { statusCode: problem.status, headers: { 'Content-Type': 'application/problem+json', ...headers }, body: JSON.stringify(problem) };
    return response;
  } finally {
    response!.headers['X-Request-Id'] = requestId;
    if (rate) Object.assign(response!.headers, rateLimitHeaders(rate), response!.headers['Retry-After'] ? { 'X-RateLimit-Remaining': '0' } : {});
    const durationMs = Math.round(performance.now() - started);
    if (principal && route && method !== 'GET') {
      const outcome = response!.statusCode < 400 ? 'ok' : (JSON.parse(response!.body) as { code: string }).code;
      await recordActivity(runtime.store, runtime.clock, principal.teamId, {
        token_id: principal.tokenId,
        surface: 'rest',
        operation: route.operationId,
        outcome,
        status: response!.statusCode,
        duration_ms: durationMs,
        request_id: requestId,
      }).catch((error) => console.error(JSON.stringify({ level: 'error', request_id: requestId, message: `activity write failed: ${(error as Error).message}` })));
    }
    options.onResponse?.({ method, path, status: response!.statusCode, duration_ms: durationMs, request_id: requestId, operation: route?.operationId ?? null });
  }
}

/**
 * The Lambda handler factory for REST routes: middy with header normalisation around
 * {@link handleRestRequest}. `getRuntime` is called per invocation (the AWS runtime is a lazy singleton).
 */
export function createRestHandler(getRuntime: () => Runtime, options: RestHandlerOptions = {}) {
  return middy<APIGatewayProxyEventV2, Result>()
    .use(httpHeaderNormalizer())
    .handler(async (event) => handleRestRequest(getRuntime(), event, options));
}
