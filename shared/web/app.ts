import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { ProblemError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { MAX_PAGE_BODY_BYTES } from './request.js';

/**
 * The web layer's Hono app (DESIGN D35): one app per HTML surface (dashboard, public pages, OAuth), served
 * on AWS by `hono/aws-lambda` (`./lambda.ts`) and locally by `@hono/node-server` (`./node.ts`). Every request
 * first gets its runtime, request id and client IP ({@link WebVariables}) and a body of at most 64 KiB (413
 * PAYLOAD_TOO_LARGE past it); paths match with or without a
 * trailing slash; a path no route serves is the surface's 404 (Hono does not answer 405 for a wrong method).
 */

/** What the adapters hand the app: the API Gateway v2 event on Lambda, the Node request locally. */
interface WebBindings {
  event?: APIGatewayProxyEventV2;
  requestContext?: APIGatewayProxyEventV2['requestContext'];
  incoming?: IncomingMessage;
  /** The local server's request id (its log line names it), or the caller's when it calls `app.fetch` itself. */
  requestId?: string;
  /** A caller that calls `app.fetch` itself (the tool server's API serving OAuth) hands its runtime and client IP. */
  runtime?: Runtime;
  clientIp?: string;
}

/** Set for every request before any route runs. */
interface WebVariables {
  runtime: Runtime;
  /** API Gateway's request id, or a fresh UUID locally. */
  requestId: string;
  /** The client's IP (API Gateway's `sourceIp`, the socket's address locally), `unknown` when neither is known. */
  clientIp: string;
}

/** The Hono environment of every surface app; a surface adds its own variables. */
export interface WebEnv<Variables extends object = object> {
  Bindings: WebBindings;
  Variables: WebVariables & Variables;
}

/** The client IP of a request: API Gateway's `sourceIp` on Lambda, the socket's remote address locally. */
function clientIpOf(env: WebBindings | undefined): string {
  return env?.clientIp || env?.requestContext?.http?.sourceIp || env?.incoming?.socket.remoteAddress || 'unknown';
}

/**
 * A surface's app: `getRuntime` is called per request (without it, the runtime is the caller's binding); the
 * request id and client IP come from the adapter. The caller adds its header policy, origin check, limiter,
 * routes, `onError` and `notFound`.
 */
export function createWebApp<Variables extends object = object>(getRuntime?: () => Runtime): Hono<WebEnv<Variables>> {
  const app = new Hono<WebEnv<Variables>>({ strict: false });
  app.use(async (c, next) => {
    const context = c as unknown as Context<WebEnv>;
    const runtime = c.env?.runtime ?? getRuntime?.();
    if (!runtime) throw new Error('A web app without getRuntime needs the runtime in its bindings.');
    context.set('runtime', runtime);
    context.set('requestId', c.env?.requestContext?.requestId || c.env?.requestId || randomUUID());
    context.set('clientIp', clientIpOf(c.env));
    await next();
  });
  app.use(
    bodyLimit({
      maxSize: MAX_PAGE_BODY_BYTES,
      onError: () => {
        throw new ProblemError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_PAGE_BODY_BYTES} bytes.`);
      },
    }),
  );
  return app;
}
