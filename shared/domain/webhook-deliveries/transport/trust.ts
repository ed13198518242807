/**
 * Which certificate authorities webhook targets are checked against (DESIGN D9): Node's root store plus,
 * for local and test receivers only, the CAs in `WEBHOOK_EXTRA_CA_FILE`. There is deliberately no switch
 * that skips verification.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import tls from 'node:tls';

/**
 * Reads `WEBHOOK_EXTRA_CA_FILE` (DESIGN D9): the file's PEM text as a one-element array, or `[]` when unset or empty.
 * Throws when set but unreadable or without a `BEGIN CERTIFICATE` block: a misconfigured trust store stops the service
 * rather than silently dropping the CA.
 */
export function extraCaFromEnvironment(env: NodeJS.ProcessEnv = process.env): string[] {
  const file = env.WEBHOOK_EXTRA_CA_FILE;
  if (!file) return [];
  const pem = readFileSync(file, 'utf8');
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error(`WEBHOOK_EXTRA_CA_FILE (${file}) holds no PEM certificate`);
  }
  return [pem];
}

/**
 * Trusted CA certificates (PEM) for webhook targets: Node's `tls.rootCertificates` then `extraCaPem`. Listed explicitly
 * because passing `ca` replaces Node's defaults; an empty `extraCaPem` trusts exactly what Node trusts by default.
 */
export function trustedCaCertificates(extraCaPem: readonly string[] = []): string[] {
  return [...tls.rootCertificates, ...extraCaPem];
}
