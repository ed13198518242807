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
 * Reads `WEBHOOK_EXTRA_CA_FILE` (DESIGN D9): when set, returns the file's PEM text as a one-element
 * array (the file may hold several certificates); when unset or empty, returns `[]`.
 *
 * @param env The environment to read (default `process.env`).
 * @throws Error when the variable is set but the file cannot be read or holds no `BEGIN CERTIFICATE`
 *   block — a misconfigured trust store should stop the service, not silently drop the extra CA.
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
 * The full list of trusted CA certificates (PEM) for webhook targets: Node's root store
 * (`tls.rootCertificates`, the Mozilla CA list Node ships) followed by `extraCaPem`.
 *
 * Passing `ca` replaces Node's defaults rather than adding to them, hence the roots are listed
 * explicitly; with an empty `extraCaPem` the result trusts exactly what Node trusts by default.
 *
 * @param extraCaPem PEM strings, each possibly holding several certificates (e.g. from
 *   {@link extraCaFromEnvironment}).
 */
export function trustedCaCertificates(extraCaPem: readonly string[] = []): string[] {
  return [...tls.rootCertificates, ...extraCaPem];
}
