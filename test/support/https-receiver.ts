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
export async function startTestReceiver(onRequest: (headers: IncomingHttpHeaders, body: string) => number): Promise<TestReceiver> {
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
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
