import { mkdtempSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCertificateAuthority, issueServerCertificate } from '../../bin/certificates.js';

/** A test HTTPS receiver on 127.0.0.1 with a CA made for it. */
export interface TestReceiver {
  /** `https://127.0.0.1:<port>/webhooks` */
  url: string;
  /** A PEM file holding the CA, for WEBHOOK_EXTRA_CA_FILE. */
  caFile: string;
  caPem: string;
  close(): Promise<void>;
}

/**
 * Starts an HTTPS server on 127.0.0.1:0 whose certificate (for `localhost` and `127.0.0.1`) is issued by
 * a fresh CA. `onRequest` gets each request's headers and raw body and returns the status to answer.
 */
export async function startTestReceiver(
  onRequest: (headers: IncomingHttpHeaders, body: string) => number,
): Promise<TestReceiver> {
  const ca = await createCertificateAuthority({ commonName: 'test receiver CA' });
  const leaf = await issueServerCertificate(ca, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  const caFile = join(mkdtempSync(join(tmpdir(), 'receiver-ca-')), 'ca.pem');
  writeFileSync(caFile, ca.certPem);
  const server = createServer({ cert: leaf.certPem, key: leaf.keyPem }, (request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = onRequest(request.headers, Buffer.concat(chunks).toString('utf8'));
      response.writeHead(status).end(status >= 200 && status < 300 ? 'ok' : 'receiver is down');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    caFile,
    caPem: ca.certPem,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One request a {@link RecordingReceiver} got: headers and raw body as received, the parsed envelope, and when. */
interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  /** The body exactly as received (what the signature covers). */
  rawBody: string;
  /** The parsed body (the event envelope). */
  envelope: { id: string; type: string; created_at: string; api_version: string; project_id: string | null; data: any };
  /** The receiver's clock when the request arrived, in unix SECONDS (for the signature's 300-second check). */
  receivedAtSeconds: number;
}

/** A {@link TestReceiver} that answers 200 to every request and keeps each one, in arrival order. */
export interface RecordingReceiver extends TestReceiver {
  deliveries: ReceivedDelivery[];
  /** The distinct envelope `type`s received so far. */
  types(): Set<string>;
}

/**
 * Starts a {@link startTestReceiver} that answers 200 and records every delivery. `nowMs` is the
 * receiver's clock (epoch MILLISECONDS; default the real one): give a service's injected clock so that a
 * signature made at the service's simulated time is checked against that same time.
 */
export async function startRecordingReceiver(nowMs: () => number = Date.now): Promise<RecordingReceiver> {
  const deliveries: ReceivedDelivery[] = [];
  const receiver = await startTestReceiver((headers, rawBody) => {
    deliveries.push({ headers, rawBody, envelope: JSON.parse(rawBody), receivedAtSeconds: Math.floor(nowMs() / 1000) });
    return 200;
  });
  return { ...receiver, deliveries, types: () => new Set(deliveries.map((delivery) => delivery.envelope.type)) };
}
