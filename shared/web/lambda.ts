import type { APIGatewayProxyEventV2, Context as LambdaContext } from 'aws-lambda';
import type { Hono } from 'hono';
import { handle } from 'hono/aws-lambda';
import type { ApiGatewayResult } from '../http/api-gateway.js';

/**
 * A surface app on Lambda (DESIGN D35): Hono's `hono/aws-lambda` adapter turns the API Gateway v2 event into
 * a `Request` (cookies from `event.cookies`) and the `Response` into the v2 result (`Set-Cookie` into `cookies`).
 */

// `Hono<any>`: a surface's app with its own variables; the adapter only calls `fetch`.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyApp = Hono<any>;

/** The Lambda handler of `app`. */
export function lambdaHandler(
  app: AnyApp,
): (event: APIGatewayProxyEventV2, context: LambdaContext) => Promise<ApiGatewayResult> {
  const handler = handle(app);
  return async (event, context) => {
    // Hono's own event type says `body: string | null` where @types/aws-lambda says `body?: string`.
    const result = (await handler(event as unknown as Parameters<typeof handler>[0], context)) as ApiGatewayResult;
    return { ...result, headers: result.headers ?? {} };
  };
}

const CANONICAL_NAMES: Readonly<Record<string, string>> = {
  'hx-redirect': 'HX-Redirect',
  'www-authenticate': 'WWW-Authenticate',
  'x-ratelimit-limit': 'X-RateLimit-Limit',
  'x-ratelimit-remaining': 'X-RateLimit-Remaining',
};

/** `content-security-policy` → `Content-Security-Policy` (the spelling the project's results use). */
const canonicalName = (name: string) =>
  CANONICAL_NAMES[name] ??
  name.replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());

const lambdaContext = { awsRequestId: 'in-process', functionName: 'in-process' } as LambdaContext;

/**
 * Serves one API Gateway v2 event with `app` in process, exactly as the Lambda does, with header names in
 * their usual spelling (`Location`, `Content-Security-Policy`): how tests and other modules call a surface.
 */
export async function serveEvent(app: AnyApp, event: APIGatewayProxyEventV2): Promise<ApiGatewayResult> {
  const result = await lambdaHandler(app)(event, lambdaContext);
  const headers = Object.fromEntries(
    Object.entries(result.headers).map(([name, value]) => [canonicalName(name), value]),
  );
  return { ...result, headers };
}
