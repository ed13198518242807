/**
 * Example webhook receiver (`npm run receiver`): HTTPS on 127.0.0.1:`--port` (RECEIVER_PORT, 4443) `/webhooks`; CA and
 * server certificate in `.receiver/` (re-issued when missing, expired or not signed by `ca.pem`). Verifies per
 * interface "Webhook trust" (constant-time v1/v0 signature, 300 s window, header/body match, ids de-duplicated 24 h):
 * 200 verified or duplicate (dropped), else 400; stdout `{ verified, id, type, project_id, reason? }` per request.
 * `--register <base_url> [--events a,b]` registers it with the token in SERVICE_TOKEN (or `--token`). Deliveries need
 * `WEBHOOK_EXTRA_CA_FILE=<abs>/.receiver/ca.pem WEBHOOK_ALLOW_PRIVATE_TARGETS=1` (D9).
 */
import { randomUUID } from 'node:crypto';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { ensureReceiverCertificates, receiverFiles, type ReceiverFiles } from './receiver-certificates.js';
import {
  createMemorySeenStore,
  verifyWebhook,
  WebhookVerificationError,
} from '../shared/domain/webhook-deliveries/verify.js';
import { WEBHOOK_EVENT_NAMES } from '../shared/catalogues/webhook-events.js';

/** Default listening port (overridden by `--port`, then `RECEIVER_PORT`). */
export const DEFAULT_RECEIVER_PORT = 4443;
/** Request path the receiver answers on. */
export const RECEIVER_PATH = '/webhooks';
/** Largest request body accepted, in BYTES (larger requests get 413). */
const MAX_BODY_BYTES = 1024 * 1024;

/** One line printed (and passed to `onEvent`) per request to {@link RECEIVER_PATH}. */
export interface ReceiverLogLine {
  verified: boolean;
  id: string | null;
  type: string | null;
  project_id: string | null;
  reason?: string;
}

/** Options of {@link startReceiver}. */
export interface StartReceiverOptions {
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** Signing secret getter; read per request so registration can set it after listening. */
  secret: () => string | undefined;
  /** Where the PEM files live; default `<project>/.receiver`. */
  dir?: string;
  /** Called with every log line; default prints it as JSON on stdout. */
  onEvent?: (line: ReceiverLogLine) => void;
}

/** A running receiver. */
export interface RunningReceiver {
  /** `https://127.0.0.1:<port>/webhooks`. */
  url: string;
  port: number;
  files: ReceiverFiles;
  close(): Promise<void>;
}

/**
 * Starts the HTTPS receiver (see the module comment for its behaviour).
 *
 * @throws Error when the port is taken or the certificates cannot be written.
 */
export async function startReceiver(options: StartReceiverOptions): Promise<RunningReceiver> {
  const files = receiverFiles(options.dir);
  const { certPem, keyPem } = await ensureReceiverCertificates(files);
  const seen = createMemorySeenStore();
  const emit = options.onEvent ?? ((line: ReceiverLogLine) => console.log(JSON.stringify(line)));

  const server = https.createServer({ cert: certPem, key: keyPem, minVersion: 'TLSv1.2' }, (req, res) => {
    handle(req, res).catch((error: unknown) => {
      emit({ verified: false, id: null, type: null, project_id: null, reason: `internal_error: ${String(error)}` });
      if (!res.headersSent) res.writeHead(500).end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (path !== RECEIVER_PATH) {
      res.writeHead(404, { 'Content-Type': 'application/json' }).end('{"error":"not_found"}');
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' }).end('{"error":"method_not_allowed"}');
      return;
    }
    const rawBody = await readBody(req);
    const headerId = single(req.headers['svc-event-id']);
    const headerType = single(req.headers['svc-event-name']);
    if (rawBody === null) {
      emit({ verified: false, id: headerId, type: headerType, project_id: null, reason: 'body_too_large' });
      res.writeHead(413).end();
      return;
    }
    const secret = options.secret();
    if (!secret) {
      emit({ verified: false, id: headerId, type: headerType, project_id: null, reason: 'no_secret_configured' });
      reply(res, 400, { received: false, reason: 'no_secret_configured' });
      return;
    }
    try {
      const event = await verifyWebhook({ rawBody, headers: req.headers, secret, seen });
      emit({ verified: true, id: event.id, type: event.type, project_id: event.project_id });
      reply(res, 200, { received: true });
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      if (error.reason === 'duplicate_event') {
        // Authentic but already processed: acknowledge (2xx) and drop it.
        emit({
          verified: true,
          id: headerId,
          type: headerType,
          project_id: projectIdOf(rawBody),
          reason: error.reason,
        });
        reply(res, 200, { received: true, duplicate: true });
        return;
      }
      emit({ verified: false, id: headerId, type: headerType, project_id: null, reason: error.reason });
      reply(res, 400, { received: false, reason: error.reason });
    }
  }

  await new Promise<void>((resolvePromise, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => {
      server.off('error', reject);
      resolvePromise();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}${RECEIVER_PATH}`,
    port,
    files,
    close: () =>
      new Promise<void>((resolvePromise) => {
        server.closeAllConnections();
        server.close(() => resolvePromise());
      }),
  };
}

/**
 * Registers `url` as a webhook endpoint of the service (`POST <baseUrl>/v1/webhook-endpoints`).
 *
 * @returns The `secret` field of the created endpoint.
 * @throws Error when the service answers non-2xx (message carries status and body) or returns no secret.
 */
export async function registerEndpoint(input: {
  baseUrl: string;
  token: string;
  url: string;
  events: readonly string[];
}): Promise<{ secret: string; endpoint: Record<string, unknown> }> {
  const response = await fetch(new URL('v1/webhook-endpoints', ensureTrailingSlash(input.baseUrl)), {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${input.token}`,
      'Idempotency-Key': randomUUID(),
      'Content-Type': 'application/json',
      Accept: 'application/json',
    },
    body: JSON.stringify({ name: 'example receiver', url: input.url, events: input.events }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`registration failed: HTTP ${response.status} ${text}`);
  const endpoint = JSON.parse(text) as Record<string, unknown>;
  if (typeof endpoint.secret !== 'string') throw new Error('registration response has no secret field');
  return { secret: endpoint.secret, endpoint };
}

function ensureTrailingSlash(base: string): string {
  // Keeps a path prefix in base_url (e.g. https://host/stage) instead of replacing it.
  const url = new URL(base);
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url.href;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

function single(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

function projectIdOf(rawBody: Buffer): string | null {
  try {
    const parsed = JSON.parse(rawBody.toString('utf8')) as { project_id?: unknown };
    return typeof parsed.project_id === 'string' ? parsed.project_id : null;
  } catch {
    return null;
  }
}

function readBody(req: IncomingMessage): Promise<Buffer | null> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolvePromise(tooLarge ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

const USAGE = `Usage: npm run receiver -- [options]

  --port <n>            port on 127.0.0.1 (default RECEIVER_PORT or ${DEFAULT_RECEIVER_PORT})
  --secret <whsec_...>  signing secret (default WEBHOOK_SECRET)
  --register <base_url> register this receiver with the service and use the returned secret
  --token <token>       bearer token for --register (needs webhook-endpoint:manage); default SERVICE_TOKEN,
                        which keeps the token out of npm's command banner and the shell's process list
  --events <a,b,...>    events to subscribe to with --register (default: all)
  --dir <path>          where the certificates live (default <project>/.receiver)
  -h, --help            show this help`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string' },
      secret: { type: 'string' },
      register: { type: 'string' },
      token: { type: 'string' },
      events: { type: 'string' },
      dir: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const port = Number(values.port ?? process.env.RECEIVER_PORT ?? DEFAULT_RECEIVER_PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`invalid port: ${values.port ?? process.env.RECEIVER_PORT}`);
  const token = values.token ?? process.env.SERVICE_TOKEN;
  if (values.register && !token) throw new Error('--register needs a token: SERVICE_TOKEN=<token> or --token <token>');

  let secret: string | undefined = values.secret ?? process.env.WEBHOOK_SECRET;
  const receiver = await startReceiver({ port, secret: () => secret, dir: values.dir });

  const shutdown = (): void => {
    void receiver.close().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);

  console.log(`Receiver listening on ${receiver.url}`);
  console.log(`CA certificate: ${receiver.files.caCert}`);
  console.log('Start the service trusting this receiver with:');
  console.log(`  WEBHOOK_EXTRA_CA_FILE=${receiver.files.caCert} WEBHOOK_ALLOW_PRIVATE_TARGETS=1 npm start`);

  if (values.register) {
    const events = values.events
      ? values.events
          .split(',')
          .map((e) => e.trim())
          .filter((e) => e.length > 0)
      : [...WEBHOOK_EVENT_NAMES];
    try {
      const registered = await registerEndpoint({
        baseUrl: values.register,
        token: token!,
        url: receiver.url,
        events,
      });
      secret = registered.secret;
      console.log(
        `Registered endpoint ${typeof registered.endpoint.id === 'string' ? registered.endpoint.id : ''} for ${events.length} event(s); using its secret.`,
      );
    } catch (error) {
      await receiver.close();
      throw error;
    }
  }
  if (!secret) {
    console.error(
      'Warning: no signing secret (--secret, WEBHOOK_SECRET or --register); every delivery will be rejected.',
    );
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
}
