/**
 * The example receiver's certificates (`npm run receiver`, `./receiver.ts`): a local CA and a server certificate for
 * `localhost` and 127.0.0.1 as PEM files in `.receiver/`, re-issued when missing, expired or not signed by `ca.pem`.
 */
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  createCertificateAuthority,
  issueServerCertificate,
  loadCertificateAuthority,
  type CertificateAuthority,
} from './certificates.js';

const PROJECT_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Paths of the receiver's PEM files. */
export interface ReceiverFiles {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
}

/** The four PEM file paths inside `dir` (default `<project>/.receiver`). */
export function receiverFiles(dir = join(PROJECT_ROOT, '.receiver')): ReceiverFiles {
  const abs = resolve(dir);
  return {
    dir: abs,
    caCert: join(abs, 'ca.pem'),
    caKey: join(abs, 'ca-key.pem'),
    serverCert: join(abs, 'server.pem'),
    serverKey: join(abs, 'server-key.pem'),
  };
}

/**
 * Loads the receiver's CA and server certificate from `files`, creating whatever is missing or unusable.
 *
 * @returns The server certificate and key (PEM) to serve, and whether anything was (re)created.
 * @throws Error when the directory cannot be created or written.
 */
export async function ensureReceiverCertificates(
  files: ReceiverFiles,
): Promise<{ certPem: string; keyPem: string; created: boolean }> {
  mkdirSync(files.dir, { recursive: true, mode: 0o700 });
  let created = false;
  let ca: CertificateAuthority | null = null;
  if (existsSync(files.caCert) && existsSync(files.caKey)) {
    try {
      ca = loadCertificateAuthority({
        certPem: readFileSync(files.caCert, 'utf8'),
        keyPem: readFileSync(files.caKey, 'utf8'),
      });
      if (ca.notAfter.getTime() <= Date.now()) ca = null;
    } catch {
      ca = null;
    }
  }
  if (!ca) {
    ca = await createCertificateAuthority({ commonName: 'Membership Service example receiver CA (local only)' });
    writeFileSync(files.caCert, ca.certPem);
    writeFileSync(files.caKey, ca.keyPem, { mode: 0o600 });
    created = true;
  }

  if (!created && existsSync(files.serverCert) && existsSync(files.serverKey)) {
    const certPem = readFileSync(files.serverCert, 'utf8');
    const keyPem = readFileSync(files.serverKey, 'utf8');
    try {
      const leaf = new X509Certificate(certPem);
      const issuer = new X509Certificate(ca.certPem);
      if (leaf.verify(issuer.publicKey) && new Date(leaf.validTo).getTime() > Date.now()) {
        return { certPem, keyPem, created: false };
      }
    } catch {
      // Unreadable: re-issue below.
    }
  }
  const server = await issueServerCertificate(ca, { hostnames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  writeFileSync(files.serverCert, server.certPem);
  writeFileSync(files.serverKey, server.keyPem, { mode: 0o600 });
  return { ...server, created: true };
}
