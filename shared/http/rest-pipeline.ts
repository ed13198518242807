import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import * as z from '../schemas/zod.js';
import { authenticateRequest } from '../auth/authenticate-request.js';
import type { Principal } from '../auth/principal.js';
import { ProblemError, fieldErrors, toProblem, type ProblemDocument } from '../errors.js';
import { parseIdempotencyKey } from '../limits/idempotency.js';
import { consumeRateLimit, rateLimitHeaders, type RateLimitState } from '../limits/rate-limit.js';
import { logger } from '../logger.js';
import type { AnyOperation } from '../operations/definition.js';
import type { AnyHandler } from '../operations/handler.js';
import { invokeOperation } from '../operations/invoke.js';
import type { Runtime } from '../runtime.js';
import { EmptyBody } from '../schemas/common.js';
import type { ApiGatewayResult } from './api-gateway.js';

/** Largest accepted request body, in bytes (256 KiB). Larger bodies get PAYLOAD_TOO_LARGE (413). */
export const MAX_BODY_BYTES = 256 * 1024;

/** One line per served request (the local server logs it). */
export type ResponseLine = {
  method: string;
  path: string;
  status: number;
  duration_ms: number;
  request_id: string;
  operation: string | null;
};

/** What the pipeline knows about the request before the operation runs. */
export interface RouteMatch {
  operation: AnyOperation;
  handler: AnyHandler;
  /** Path parameters as API Gateway (or the local matcher) extracted them, not yet validated. */
  pathParameters: Record<string, string>;
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): ApiGatewayResult {
  return {
    statusCode: status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', ...headers },
    body: JSON.stringify(body),
  };
}

function validate(schema: z.ZodMiniType | undefined, value: unknown, prefix: string): Record<string, unknown> {
  if (!schema) {
    if (value && typeof value === 'object' && Object.keys(value).length > 0 && prefix === 'query') {
      throw new ProblemError('VALIDATION_FAILED', 'This operation takes no query parameters.', {
        errors: Object.keys(value).map((key) => ({ path: `query.${key}`, message: 'Unknown parameter.' })),
      });
    }
    return {};
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success)
    throw new ProblemError('VALIDATION_FAILED', `The request ${prefix} is not valid.`, {
      errors: fieldErrors(prefix, parsed.error.issues),
    });
  return parsed.data as Record<string, unknown>;
}

function rawBodyOf(event: APIGatewayProxyEventV2): string {
  if (!event.body) return '';
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
  if (raw.byteLength > MAX_BODY_BYTES)
    throw new ProblemError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES} bytes.`);
  return raw.toString('utf8');
}

/**
 * Parses and validates a JSON body (D1): wrong content type → 415, malformed JSON / schema → 422.
 * A write without a body schema takes no body: an empty body or `{}` only.
 */
function parseBody(operation: AnyOperation, headers: Record<string, string>, raw: string): Record<string, unknown> {
  const schema = operation.body ?? (operation.rest.method !== 'GET' ? EmptyBody : undefined);
  if (!schema) return {};
  if (raw.trim() === '') return validate(schema, {}, 'body');
  const contentType = headers['content-type'] ?? '';
  if (!/^application\/(?:[\w.+-]+\+)?json\s*(;|$)/i.test(contentType)) {
    throw new ProblemError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as JSON with `Content-Type: application/json`.');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ProblemError('VALIDATION_FAILED', 'The request body is not valid JSON.', {
      errors: [{ path: 'body', message: (error as Error).message }],
    });
  }
  return validate(schema, parsed, 'body');
}

/**
 * The query string's values for a query schema, which also validates JSON tool arguments: `true`/`false`
 * become booleans for the schema's boolean fields and decimal text becomes a number for its number fields;
 * anything else stays text, for zod to refuse with a field error.
 */
function queryValues(
  schema: z.ZodMiniObject | undefined,
  raw: Record<string, string | undefined>,
): Record<string, unknown> {
  const values: Record<string, unknown> = { ...raw };
  for (const [name, field] of Object.entries(schema?.shape ?? {})) {
    const text = raw[name];
    if (text === undefined) continue;
    let def = (field as z.ZodMiniType)._zod.def;
    while (def.type === 'optional' || def.type === 'default') def = (def as z.core.$ZodOptionalDef).innerType._zod.def;
    if (def.type === 'boolean' && (text === 'true' || text === 'false')) values[name] = text === 'true';
    if (def.type === 'number' && /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(text)) values[name] = Number(text);
  }
  return values;
}

/** Header names in lower case (API Gateway v2 and middy already do this; direct callers may not). */
export function lowerCaseHeaders(headers: Record<string, string | undefined> | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {}))
    if (typeof value === 'string') result[name.toLowerCase()] = value;
  return result;
}

/** A problem document as an API Gateway result. */
export function problemResult(error: unknown, requestId: string): ApiGatewayResult {
  if (!(error instanceof ProblemError))
    logger.error('unexpected error', { request_id: requestId, error: error as Error });
  const { problem, headers } = toProblem(error, requestId);
  return problemDocumentResult(problem, headers);
}

function problemDocumentResult(problem: ProblemDocument, headers: Record<string, string>): ApiGatewayResult {
  return {
    statusCode: problem.status,
    headers: { 'Content-Type': 'application/problem+json', ...headers },
    body: JSON.stringify(problem),
  };
}

/**
 * Serves one REST request of a matched operation (DESIGN D1–D4): authenticate (per-IP `rest-anonymous` bucket, 429/401,
 * D4), then {@link invokeOperation} with the per-token `rest` limit and validation (422/413/415). Headers:
 * `X-RateLimit-*` (`Retry-After` on 429), `X-Request-Id`, `Idempotent-Replay: true` on a replay. Never throws.
 */
export async function serveRestRequest(
  runtime: Runtime,
  event: APIGatewayProxyEventV2,
  match: RouteMatch | ProblemError,
  onResponse?: (line: ResponseLine) => void,
): Promise<ApiGatewayResult> {
  const started = performance.now();
  const requestId = event.requestContext?.requestId || randomUUID();
  const method = (event.requestContext?.http?.method ?? 'GET').toUpperCase();
  const path = event.rawPath ?? event.requestContext?.http?.path ?? '/';
  const clientIp = event.requestContext?.http?.sourceIp || 'unknown';
  const headers = lowerCaseHeaders(event.headers);
  let rate: RateLimitState | null = null;
  let response: ApiGatewayResult;
  try {
    if (match instanceof ProblemError) throw match;
    const operation = match.operation;
    let principal: Principal | null = null;
    if (operation.ability) {
      const authentication = await authenticateRequest(runtime.store, runtime.clock, {
        authorization: headers.authorization,
        bucket: 'rest-anonymous',
        clientIp,
      });
      if (!authentication.ok) {
        rate = authentication.rate;
        throw authentication.error;
      }
      principal = authentication.principal;
    }
    const outcome = await invokeOperation({
      runtime,
      principal,
      operation,
      handler: match.handler,
      surface: 'rest',
      requestId,
      startedAt: started,
      clientIp,
      admit: async () => {
        // A public write's per-IP limit (`perIpLimit`) is the pipeline's, the same on every surface (D4).
        if (principal) rate = await consumeRateLimit(runtime.store, runtime.clock, 'rest', principal.tokenId);
      },
      decode: () => {
        const params = validate(operation.params, match.pathParameters, 'path');
        const query = validate(
          operation.query,
          queryValues(operation.query, event.queryStringParameters ?? {}),
          'query',
        );
        const write = method !== 'GET';
        const idempotencyKey = write ? parseIdempotencyKey(headers['idempotency-key'], 'header.idempotency-key') : null;
        const raw = write ? rawBodyOf(event) : '';
        const body = parseBody(operation, headers, raw);
        return {
          input: { ...params, ...query, ...body },
          idempotencyKey,
          fingerprint: [principal?.tokenId ?? '', method, path, event.rawQueryString ?? '', raw],
          cursorField: 'query.cursor',
        };
      },
    });
    rate = outcome.rate ?? rate;
    if (outcome.ok)
      response = json(
        operation.rest.successStatus,
        outcome.result,
        outcome.replayed ? { 'Idempotent-Replay': 'true' } : {},
      );
    else response = problemDocumentResult(outcome.problem, outcome.headers);
    return response;
  } catch (error) {
    response = problemResult(error, requestId);
    return response;
  } finally {
    response!.headers['X-Request-Id'] = requestId;
    if (rate) Object.assign(response!.headers, rateLimitHeaders(rate));
    onResponse?.({
      method,
      path,
      status: response!.statusCode,
      duration_ms: Math.round(performance.now() - started),
      request_id: requestId,
      operation: match instanceof ProblemError ? null : match.operation.id,
    });
  }
}

/**
 * Finds operation `operationId` in a module's `operations.ts` exports (the per-route Lambda entry
 * imports that file as a namespace). Throws when it is not there (a build error).
 */
export function operationInModule(moduleExports: Record<string, unknown>, operationId: string): AnyOperation {
  for (const value of Object.values(moduleExports)) {
    const operations = (value as { operations?: Record<string, AnyOperation> } | null)?.operations;
    if (operations?.[operationId]) return operations[operationId];
  }
  throw new Error(`Operation ${operationId} is not in this module`);
}

/**
 * The Lambda handler of ONE REST route (DESIGN D23: one Lambda per route, whose bundle holds only its own
 * operation): middy with header normalisation around {@link serveRestRequest}. API Gateway already
 * matched the route, so the path parameters come from the event. `getRuntime` is called per invocation
 * (the AWS runtime is a lazy singleton).
 */
export function createRouteHandler(getRuntime: () => Runtime, operation: AnyOperation, handler: AnyHandler) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>()
    .use(httpHeaderNormalizer())
    .handler(async (event) =>
      serveRestRequest(getRuntime(), event, {
        operation,
        handler,
        pathParameters: (event.pathParameters ?? {}) as Record<string, string>,
      }),
    );
}
