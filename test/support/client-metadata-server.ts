/**
 * A loopback HTTP server of OAuth Client ID Metadata Documents for tests (DESIGN D30): `serve(path, body, headers)`
 * publishes a document, `url(path)` is its `client_id`, `hits(path)` counts the GETs it answered. `close()` stops it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ClientMetadataServer {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  origin: string;
  /** The URL of `path` on this server. */
  url(path: string): string;
  /** Publishes `body` (an object is sent as JSON) at `path` with `headers`. */
  serve(path: string, body: unknown, headers?: Record<string, string>): void;
  /** How many requests `path` received. */
  hits(path: string): number;
  close(): Promise<void>;
}

/** Starts the server on 127.0.0.1 and a free port. */
export async function startClientMetadataServer(): Promise<ClientMetadataServer> {
  const documents = new Map<string, { body: string; headers: Record<string, string> }>();
  const counts = new Map<string, number>();
  const server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://documents').pathname;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    const document = documents.get(path);
    if (!document) return void response.writeHead(404).end();
    response.writeHead(200, { 'Content-Type': 'application/json', ...document.headers }).end(document.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: (path) => `${origin}${path}`,
    serve(path, body, headers = {}) {
      documents.set(path, { body: typeof body === 'string' ? body : JSON.stringify(body), headers });
    },
    hits: (path) => counts.get(path) ?? 0,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
