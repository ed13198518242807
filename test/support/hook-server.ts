/**
 * A loopback HTTP front of the service's inbound hooks for tests: the fake Stripe API's hosted checkout delivers its
 * signed events here (`FakeStripeApi.deliverEventsTo(url + '/hooks/stripe/<project>')`), and each request is served in
 * process by `serveHookRequest`, as the hook Lambda would. `close()` stops it.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serveHookRequest } from '../../shared/hooks/dispatcher.js';
import type { Runtime } from '../../shared/runtime.js';

/** Starts the hook front over `runtime()` (read per request) on 127.0.0.1. */
export async function startHookServer(runtime: () => Runtime): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://hooks').pathname;
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      serveHookRequest(runtime(), {
        version: '2.0',
        routeKey: '$default',
        rawPath: path,
        rawQueryString: '',
        headers,
        requestContext: {
          requestId: randomUUID(),
          http: {
            method: request.method ?? 'POST',
            path,
            protocol: 'HTTP/1.1',
            sourceIp: '127.0.0.1',
            userAgent: 'Stripe/1.0',
          },
        },
        body: Buffer.concat(chunks).toString('utf8'),
        isBase64Encoded: false,
      } as never).then(
        (result) =>
          response.writeHead(result.statusCode ?? 200, { 'Content-Type': 'application/json' }).end(result.body),
        (error: Error) => response.writeHead(500).end(error.message),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
