import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import type { z } from 'zod';
import { recordActivity } from '../activity.js';
import { authorizeOperation } from '../auth/authorize.js';
import { authenticate, type Principal } from '../auth/tokens.js';
import { ProblemError, cursorRejection, fieldErrors, toProblem } from '../errors.js';
import { EmptyBody } from '../schemas/common.js';
import { beginIdempotentRequest, parseIdempotencyKey, requestFingerprint, type IdempotencyClaim, type StoredResponse } from '../limits/idempotency.js';
import { consumeRateLimit, rateLimitHeaders, type RateLimitState } from '../limits/rate-limit.js';
import type { Runtime } from '../runtime.js';
import { OPERATIONS } from './operations.js';
import { matchRoute, type OperationId, type RouteDefinition } from './route-table.js';
import { logger } from '../logger.js';

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

/**
 * Parses and validates a JSON body (D1): wrong content type → 415, malformed JSON / schema → 422.
 * A write route without a body schema takes no body: an empty body or `{}` only.
 */
function parseBody(route: RouteDefinition, headers: Record<string, string>, raw: string): unknown {
  const schema = route.body ?? (route.method !== 'GET' ? EmptyBody : undefined);
  if (!schema) return undefined;
  if (raw.trim() === '') return validate(schema, {}, 'body');
  const contentType = headers['content-type'] ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with `Content-Type: application/json`.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ProblemError('VALIDATION_FAILED', 'The request body is not valid JSON.', { errors: [{ path: 'body', message: (error as Error).message }] });
  }
  return validate(schema, parsed, 'body');
}

/** Header names in lower case (API Gateway v2 and middy already do this; direct callers may not). */
function lowerCaseHeaders(headers: Record<string, string | undefined> | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) if (typeof value === 'string') result[name.toLowerCase()] = value;
  return result;
}

/**
 * Serves one REST request given as an API Gateway HTTP API (v2) event, in the order every route shares
 * (DESIGN D1–D4): route match (404/405) → authenticate (401; a request without a valid token is counted
 * in the per-IP `rest-anonymous` bucket) → `rest` rate limit per token (429) → the route's ability and
 * token scope (403, `authorizeOperation`) → path, query, `Idempotency-Key` and body validation
 * (422/413/415) → idempotency claim (replay, 409, 422) → the operation → problem documents for any
 * failure. Rate-limited responses carry `X-RateLimit-Limit`/`X-RateLimit-Remaining` (and `Retry-After`
 * on 429); every response carries `X-Request-Id`. Every write made with a valid token is recorded in
 * the activity log, whatever its outcome. Never throws.
 */
export async function handleRestRequest(runtime: Runtime, event: APIGatewayProxyEventV2, options: RestHandlerOptions = {}): Promise<Result> {
  const started = performance.now();
  const requestId = event.requestContext?.requestId || randomUUID();
  const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const headers = lowerCaseHeaders(event.headers);
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
      try {
        principal = await authenticate(runtime.store, headers.authorization);
      } catch (error) {
        if (error instanceof ProblemError && error.code === 'AUTHENTICATION_REQUIRED') {
          rate = await consumeRateLimit(runtime.store, runtime.clock, 'rest-anonymous', event.requestContext?.http?.sourceIp || 'unknown');
        }
        throw error;
      }
      rate = await consumeRateLimit(runtime.store, runtime.clock, 'rest', principal.tokenId);
      authorizeOperation(principal, { ability: route.ability, teamWide: route.teamWide ?? false });
    }
    const params = validate(route.params, match.pathParameters, 'path') as Record<string, string>;
    const query = validate(route.query, event.queryStringParameters ?? {}, 'query') as Record<string, unknown>;
    const isWrite = method !== 'GET';
    const idempotencyKey = isWrite ? parseIdempotencyKey(headers['idempotency-key'], 'header.idempotency-key') : null;
    const raw = isWrite ? rawBodyOf(event) : '';
    const body = parseBody(route, headers, raw);
    if (idempotencyKey && principal) {
      claim = await beginIdempotentRequest(runtime.store, runtime.clock, principal.teamId, idempotencyKey, requestFingerprint([method, path, event.rawQueryString ?? '', raw]));
      if (claim.kind === 'replay') {
        const stored = claim.response;
        claim = null;
        response = { statusCode: stored.status, headers: { ...stored.headers, 'Idempotent-Replay': 'true' }, body: stored.body };
        return response;
      }
    }
    let result: unknown;
    try {
      result = await OPERATIONS[route.operationId as OperationId]({ runtime, principal, params, query, body });
    } catch (error) {
      throw (query.cursor !== undefined && cursorRejection(error, 'query.cursor')) || error;
    }
    response = json(route.successStatus, result);
    if (claim?.kind === 'claimed') {
      const completed = claim;
      claim = null; // the operation took effect: never release the key now, whatever happens next
      const stored: StoredResponse = { status: response.statusCode, headers: { ...response.headers }, body: response.body };
      await completed.complete(stored).catch((error) =>
        logger.error('idempotency record not completed', { request_id: requestId, error: error as Error }),
      );
    }
    return response;
  } catch (error) {
    if (claim?.kind === 'claimed') await claim.release().catch(() => undefined);
    if (!(error instanceof ProblemError)) logger.error('unexpected error', { request_id: requestId, error: error as Error });
    const { problem, headers: problemHeaders } = toProblem(error, requestId);
    response = { statusCode: problem.status, headers: { 'Content-Type': 'application/problem+json', ...problemHeaders }, body: JSON.stringify(problem) };
    return response;
  } finally {
    response!.headers['X-Request-Id'] = requestId;
    if (rate) Object.assign(response!.headers, rateLimitHeaders(rate));
    const durationMs = Math.round(performance.now() - started);
    if (principal && route && method !== 'GET') {
      const outcome = response!.statusCode < 400 ? 'ok' : ((JSON.parse(response!.body) as { code?: string }).code ?? 'INTERNAL_ERROR');
      await recordActivity(runtime.store, runtime.clock, principal.teamId, {
        token_id: principal.tokenId,
        surface: 'rest',
        operation: route.operationId,
        outcome,
        status: response!.statusCode,
        duration_ms: durationMs,
        request_id: requestId,
      }).catch((error) => logger.error('activity write failed', { request_id: requestId, error: error as Error }));
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
