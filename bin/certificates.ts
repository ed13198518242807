/**
 * Dev-only test and local certificates (DESIGN §3; D9: trusted through `WEBHOOK_EXTRA_CA_FILE`, never by skipping
 * verification), built by `selfsigned` (RSA 2048, SHA-256), all PEM (private keys PKCS#8). Used by the example
 * receiver, tests and benchmarks, never by the service: no revocation, no key protection, no audit.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { isIP } from 'node:net';
import { generate } from 'selfsigned';
import { DAY_MS, HOUR_MS } from '../shared/clock.js';

/** A certificate authority able to issue server certificates. */
export interface CertificateAuthority {
  /** The CA certificate (PEM). Give this to clients as an extra trusted root. */
  certPem: string;
  /** The CA private key (PKCS#8 PEM). Keep it private; anyone holding it can impersonate any host. */
  keyPem: string;
  /** The CA subject common name. */
  commonName: string;
  /** End of validity. */
  notAfter: Date;
}

/** A certificate issued to a TLS server. */
export interface ServerCertificate {
  /** The leaf certificate (PEM); serve it as `cert`. */
  certPem: string;
  /** The leaf private key (PKCS#8 PEM); serve it as `key`. */
  keyPem: string;
}

/** Options of {@link createCertificateAuthority}. */
export interface CreateCertificateAuthorityOptions {
  /** Subject (and issuer) common name of the self-signed root. */
  commonName: string;
  /** Start of validity; default one hour ago (tolerates clock skew). */
  notBefore?: Date;
  /** End of validity; default ten years from now. */
  notAfter?: Date;
}

/**
 * Creates a self-signed root CA (RSA 2048, SHA-256, `basicConstraints` CA:true critical, key usage
 * keyCertSign + cRLSign + digitalSignature critical).
 *
 * @returns The CA with its certificate and key in PEM.
 * @throws Error when `notAfter` is not after `notBefore`.
 */
export async function createCertificateAuthority(
  options: CreateCertificateAuthorityOptions,
): Promise<CertificateAuthority> {
  const now = Date.now();
  const notBefore = options.notBefore ?? new Date(now - HOUR_MS);
  const notAfter = options.notAfter ?? new Date(now + 3650 * DAY_MS);
  assertValidity(notBefore, notAfter);
  const pems = await generate([{ name: 'commonName', value: options.commonName }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: notBefore,
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  return { certPem: pems.cert, keyPem: pems.private, commonName: options.commonName, notAfter };
}

/**
 * Rebuilds a {@link CertificateAuthority} from PEM files written earlier (e.g. `.receiver/ca.pem` and
 * `.receiver/ca-key.pem`).
 *
 * @throws Error when the PEM cannot be parsed, the certificate is not a CA, or the key does not match it.
 */
export function loadCertificateAuthority(pems: { certPem: string; keyPem: string }): CertificateAuthority {
  const x509 = new X509Certificate(pems.certPem);
  if (!x509.ca) throw new Error('certificate is not a CA certificate (basicConstraints CA:false)');
  if (!x509.checkPrivateKey(createPrivateKey(pems.keyPem))) {
    throw new Error('CA private key does not match the CA certificate');
  }
  const commonName = /^CN=(.*)$/m.exec(x509.subject)?.[1] ?? '';
  return { certPem: pems.certPem, keyPem: pems.keyPem, commonName, notAfter: new Date(x509.validTo) };
}

/** Options of {@link issueServerCertificate}. */
export interface IssueServerCertificateOptions {
  /** DNS subject alternative names, e.g. `['localhost']`. The first one (or first IP) is also the CN. */
  hostnames: string[];
  /** IP subject alternative names (IPv4 or IPv6 literals), e.g. `['127.0.0.1', '::1']`. */
  ipAddresses: string[];
  /** Start of validity; default one hour ago. Pass past dates to build an expired certificate. */
  notBefore?: Date;
  /** End of validity; default 397 days from now. */
  notAfter?: Date;
}

/**
 * Issues a TLS server certificate signed by `ca` (serverAuth, SANs from `hostnames`/`ipAddresses`); serve the leaf
 * alone, clients trust `ca.certPem`.
 * @throws Error when no host or IP is given, an IP is invalid, or the dates are inverted.
 */
export async function issueServerCertificate(
  ca: CertificateAuthority,
  options: IssueServerCertificateOptions,
): Promise<ServerCertificate> {
  const now = Date.now();
  const notBefore = options.notBefore ?? new Date(now - HOUR_MS);
  const notAfter = options.notAfter ?? new Date(now + 397 * DAY_MS);
  assertValidity(notBefore, notAfter);
  if (options.hostnames.length === 0 && options.ipAddresses.length === 0) {
    throw new Error('a server certificate needs at least one host name or IP address');
  }
  for (const ip of options.ipAddresses) {
    if (isIP(ip) === 0) throw new Error(`not an IP address: ${ip}`);
  }
  const pems = await generate([{ name: 'commonName', value: options.hostnames[0] ?? options.ipAddresses[0] }], {
    keyType: 'rsa',
    keySize: 2048,
    algorithm: 'sha256',
    notBeforeDate: notBefore,
    notAfterDate: notAfter,
    ca: { key: ca.keyPem, cert: ca.certPem },
    extensions: [
      { name: 'basicConstraints', cA: false, critical: true },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          ...options.hostnames.map((value) => ({ type: 2 as const, value })),
          ...options.ipAddresses.map((ip) => ({ type: 7 as const, ip })),
        ],
      },
    ],
  });
  return { certPem: pems.cert, keyPem: pems.private };
}

function assertValidity(notBefore: Date, notAfter: Date): void {
  if (!(notAfter.getTime() > notBefore.getTime())) {
    throw new Error('notAfter must be later than notBefore');
  }
}
