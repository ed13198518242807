import { hostname as machineName, networkInterfaces } from 'node:os';

/** The loopback names every local server answers to (as the MCP SDK's `localhostHostValidation`). */
const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '[::1]'] as const;

/** Hosts that mean "every interface": the names the server answers to are then every local address. */
const WILDCARD_HOSTS = new Set(['0.0.0.0', '::', '[::]', '']);

/** An address or name as it appears in a URL's `hostname`: lower case, IPv6 in brackets. */
function urlHostname(name: string): string {
  const lower = name.toLowerCase();
  return lower.includes(':') && !lower.startsWith('[') ? `[${lower}]` : lower;
}

/**
 * The host names the local server serves when it listens on `listenHost` (`HOST`), for its `Host`
 * header check (DNS-rebinding protection, DESIGN D5): the loopback names, `listenHost` itself, and —
 * when `listenHost` is a wildcard (`0.0.0.0`, `::`) — every address of this machine's interfaces and its
 * host name. Names are lower case, IPv6 addresses in brackets, without ports (the check is port-agnostic,
 * like the MCP SDK's `hostHeaderValidation`).
 */
export function servedHostnames(listenHost: string): string[] {
  const names = new Set<string>(LOOPBACK_NAMES);
  if (WILDCARD_HOSTS.has(listenHost)) {
    for (const addresses of Object.values(networkInterfaces()))
      for (const address of addresses ?? []) names.add(urlHostname(address.address));
    names.add(urlHostname(machineName()));
  } else {
    names.add(urlHostname(listenHost));
  }
  return [...names];
}

/**
 * The host name of a `Host` header value (`127.0.0.1:3000` → `127.0.0.1`, `[::1]:3000` → `[::1]`), parsed
 * with the URL parser as the MCP SDK does; null when it is missing or makes no valid URL host.
 */
export function hostnameOf(hostHeader: string | undefined): string | null {
  if (!hostHeader) return null;
  try {
    const url = new URL(`http://${hostHeader}`);
    return url.username || url.password || url.pathname !== '/' || url.search || url.hash ? null : url.hostname;
  } catch {
    return null;
  }
}

/** True when the `Host` header names one of `served` (from {@link servedHostnames}), whatever the port. */
export function isServedHost(hostHeader: string | undefined, served: readonly string[]): boolean {
  const name = hostnameOf(hostHeader);
  return name !== null && served.includes(name);
}
