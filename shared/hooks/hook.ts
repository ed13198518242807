import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import { lowerCaseHeaders } from '../http/rest-pipeline.js';
import type { Runtime } from '../runtime.js';

/**
 * What every inbound hook (DESIGN D22) shares: its request and answer shapes, and the Lambda handler of one
 * hook route on AWS. Each hook module exports a {@link HookHandler}; each `functions/<hook>.ts` imports only
 * its own (so a hook's bundle holds only its provider's SDK), and the local server's dispatcher
 * (`dispatcher.ts`) holds them all.
 */

/** The answer of a hook: a status and a small JSON body (never a secret, never whether a project exists). */
export interface HookAnswer {
  status: number;
  body: Record<string, unknown>;
}

/**
 * One request to a hook route: `projectId` from the path (`''` for a route without one), lower-cased headers, the raw
 * body (UTF-8).
 */
interface HookRequest {
  projectId: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A UUID in any case: what a hook accepts as a project id (or a team or invoice id in metadata) before reading
 * anything.
 */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `value` is a UUID (any case; callers lower-case it before using it in keys). */
export function isUuid(value: string | undefined): value is string {
  return value !== undefined && UUID.test(value);
}

/** Handles one verified-or-refused request of a hook route; never throws. */
export type HookHandler = (runtime: Runtime, request: HookRequest) => Promise<HookAnswer>;

/** A hook answer as an API Gateway result (JSON). */
export function hookResult(answer: HookAnswer, requestId: string): ApiGatewayResult {
  return {
    statusCode: answer.status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': requestId },
    body: JSON.stringify(answer.body),
  };
}

/** The raw body of an event as UTF-8 text. */
export function rawBody(event: APIGatewayProxyEventV2): string {
  if (!event.body) return '';
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
}

/**
 * The Lambda handler of one hook route on AWS (API Gateway passes `{project_id}`, when the route has one, as a path
 * parameter).
 */
export function createHookHandler(getRuntime: () => Runtime, handle: HookHandler) {
  return async (event: APIGatewayProxyEventV2): Promise<ApiGatewayResult> => {
    const requestId = event.requestContext?.requestId ?? 'unknown';
    const projectId = event.pathParameters?.project_id ?? '';
    return hookResult(
      await handle(getRuntime(), { projectId, headers: lowerCaseHeaders(event.headers), body: rawBody(event) }),
      requestId,
    );
  };
}
