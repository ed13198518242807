/**
 * Where a webhook may be sent (DESIGN D9 "Outbound safety"): `https:` only, one DNS resolution per attempt, and the
 * pinned address (`allowed_ips` via `ipaddr.js`; private, loopback, link-local and metadata ranges refused unless
 * private targets are allowed). Every refusal is an {@link AttemptFailure} with its kind.
 *
 * @module
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { AttemptFailure } from './port.js';

/**
 * Resolves a host name to every address it has (IPv4 and/or IPv6 literals, in resolver order).
 * Rejections are reported as `dns` failures.
 */
export type HostResolver = (hostname: string) => Promise<string[]>;

/** A parsed, accepted webhook target. */
export interface WebhookTarget {
  /** The parsed URL (`https:`, no credentials). */
  url: URL;
  /** The host without IPv6 brackets: a host name or an IP literal. */
  host: string;
  /** TCP port: the URL's, else 443. */
  port: number;
}

/**
 * The system resolver: `node:dns/promises` `lookup` with `{ all: true, order: 'verbatim' }`
 * (getaddrinfo, so `/etc/hosts` is honoured), returning every address in the order the system gave.
 *
 * @throws The resolver's error (e.g. `code: 'ENOTFOUND'`) when the name does not resolve.
 */
export async function systemResolver(hostname: string): Promise<string[]> {
  const answers = await dnsLookup(hostname, { all: true, order: 'verbatim' });
  return answers.map((answer) => answer.address);
}

/**
 * Parses and checks a webhook URL (DESIGN D8/D9: HTTPS only).
 *
 * @returns The URL, its bracket-free host and its port (443 when absent).
 * @throws AttemptFailure `invalid_url` when the URL does not parse, is not `https:`, carries a user name
 *   or password, or has no host.
 */
export function parseWebhookTarget(raw: string): WebhookTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new AttemptFailure('invalid_url', 'URL does not parse');
  }
  if (url.protocol !== 'https:') throw new AttemptFailure('invalid_url', `scheme ${url.protocol} is not https:`);
  if (url.username || url.password) throw new AttemptFailure('invalid_url', 'URL must not carry credentials');
  if (!url.hostname) throw new AttemptFailure('invalid_url', 'URL has no host');
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { url, host, port: url.port === '' ? 443 : Number(url.port) };
}

/**
 * Resolves `host` ONCE (DESIGN D9: the connection then goes to an address chosen from this answer, so
 * DNS rebinding cannot move it). An IP literal is returned as is, without calling `resolve`.
 *
 * @returns Every resolved address that is an IP literal, in resolver order (never empty).
 * @throws AttemptFailure `dns` when the resolver rejects or returns no IP address.
 */
export async function resolveCandidates(host: string, resolve: HostResolver): Promise<string[]> {
  if (isIP(host) !== 0) return [host];
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new AttemptFailure('dns', `DNS lookup of ${host} failed${code ? ` (${code})` : ''}`);
  }
  const valid = addresses.filter((address) => isIP(address) !== 0);
  if (valid.length === 0) throw new AttemptFailure('dns', `DNS lookup of ${host} returned no address`);
  return valid;
}

/**
 * Parses an address, dropping an IPv6 zone (`%eth0`) and turning an IPv4-mapped IPv6 address
 * (`::ffff:127.0.0.1`) into its IPv4 form, so both rules see the address actually reached.
 *
 * @throws Error when `address` is not an IP literal.
 */
function normaliseAddress(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const parsed = ipaddr.parse(address.split('%')[0]);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address()
    : parsed;
}

/**
 * Whether `address` is on the endpoint's allowlist: it equals an address entry or falls inside a CIDR
 * entry (`10.0.0.0/8`, `2001:db8::/32`; an IPv4-mapped IPv6 CIDR of /96 or longer is compared as IPv4).
 * Entries that do not parse match nothing; an IPv4 address never matches an IPv6 entry and vice versa.
 */
function isOnAllowlist(address: ipaddr.IPv4 | ipaddr.IPv6, allowedIps: readonly string[]): boolean {
  for (const entry of allowedIps) {
    try {
      if (entry.includes('/')) {
        const [net, bits] = ipaddr.parseCIDR(entry.trim());
        const range =
          net.kind() === 'ipv6' && (net as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96
            ? ([(net as ipaddr.IPv6).toIPv4Address(), bits - 96] as const)
            : ([net, bits] as const);
        if (range[0].kind() === address.kind() && address.match(range[0], range[1])) return true;
      } else {
        const ip = normaliseAddress(entry.trim());
        if (ip.kind() === address.kind() && ip.toNormalizedString() === address.toNormalizedString()) return true;
      }
    } catch {
      // An unparsable entry matches nothing.
    }
  }
  return false;
}

/**
 * Picks the address to pin (DESIGN D9): the first of `candidates` (IP literals) on the allowlist (if non-empty, else
 * `ip_not_allowed`) AND global unicast unless `allowPrivateTargets` (else `private_address`; an allowlist never admits
 * a private address). Returns it normalised (IPv4-mapped → IPv4); throws the FIRST candidate's AttemptFailure.
 */
export function pinAddress(
  candidates: readonly string[],
  allowedIps: readonly string[] | null | undefined,
  allowPrivateTargets: boolean,
): string {
  let firstFailure: AttemptFailure | null = null;
  for (const candidate of candidates) {
    const address = normaliseAddress(candidate);
    let failure: AttemptFailure | null = null;
    if (allowedIps && allowedIps.length > 0 && !isOnAllowlist(address, allowedIps)) {
      failure = new AttemptFailure('ip_not_allowed', `resolved address ${candidate} is not in allowed_ips`);
    } else if (!allowPrivateTargets && address.range() !== 'unicast') {
      failure = new AttemptFailure(
        'private_address',
        `resolved address ${candidate} is in the ${address.range()} range; non-public targets are refused`,
      );
    }
    if (!failure) return address.toString();
    firstFailure ??= failure;
  }
  throw firstFailure ?? new AttemptFailure('dns', 'no address');
}
