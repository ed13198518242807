import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener, type HttpBindings } from '@hono/node-server';
import type { Hono } from 'hono';

/**
 * A surface app on the local server (DESIGN §5, D35): `@hono/node-server` turns the Node request into a `Request` and
 * writes the `Response`. Node's own `Request`/`Response` stay in place (the rest of the process uses them).
 * `onResponse` hears each answer's method, path, status, duration and request id (the local server's log line).
 */
export function nodeListener(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  app: Hono<any>,
  onResponse: (answer: { method: string; path: string; status: number; durationMs: number; requestId: string }) => void,
): (incoming: IncomingMessage, outgoing: ServerResponse) => Promise<void> {
  return getRequestListener(
    async (request, env) => {
      const started = performance.now();
      const requestId = randomUUID();
      const response = await app.fetch(request, { incoming: (env as HttpBindings).incoming, requestId });
      onResponse({
        method: request.method,
        path: new URL(request.url).pathname,
        status: response.status,
        durationMs: Math.round(performance.now() - started),
        requestId,
      });
      return response;
    },
    { overrideGlobalObjects: false },
  );
}
