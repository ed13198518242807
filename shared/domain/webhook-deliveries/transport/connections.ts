/**
 * The connection policy of the HTTPS transport (DESIGN D9): a `lookup` pinned to the address the address
 * policy chose, and the timing and TLS version of each connection, with which attempt first used it.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { isIP, type LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import type tls from 'node:tls';
import type { buildConnector } from 'undici';

/** What is known of one connection: how long it took to open (MILLISECONDS) and its TLS version. */
interface ConnectionDetail {
  connectMs: number;
  tlsVersion: string | null;
  /** The payload of the first attempt that used it (its `connect_ms` is this connection's; later ones reused it). */
  usedBy: Buffer | null;
}

/** Connections opened by the transports of this process, by socket. */
export const connections = new WeakMap<object, ConnectionDetail>();
/** Attempts in flight, by the Buffer sent as their body: where the socket that carried them is noted. */
export const attemptsByPayload = new WeakMap<Buffer, { socket?: object }>();

/**
 * undici announces each request as its headers are written, with the socket (`undici:client:sendHeaders`);
 * the request's body is the attempt's own Buffer, so the attempt learns which connection carried it.
 */
diagnosticsChannel.subscribe('undici:client:sendHeaders', (message) => {
  const { request, socket } = message as { request: { body?: unknown }; socket: object };
  if (!Buffer.isBuffer(request.body)) return;
  const attempt = attemptsByPayload.get(request.body);
  if (!attempt) return;
  attempt.socket = socket;
  const connection = connections.get(socket);
  if (connection && connection.usedBy === null) connection.usedBy = request.body;
});

/** Wraps undici's connector to time each new connection (TCP and TLS) and note its TLS version. */
export function measuredConnector(connect: buildConnector.connector): buildConnector.connector {
  return (options, callback) => {
    const started = performance.now();
    return connect(options, (...args) => {
      const [error, socket] = args;
      if (!error && socket) {
        const tlsVersion =
          typeof (socket as tls.TLSSocket).getProtocol === 'function' ? (socket as tls.TLSSocket).getProtocol() : null;
        connections.set(socket, { connectMs: Math.round(performance.now() - started), tlsVersion, usedBy: null });
      }
      callback(...args);
    });
  };
}

/** A `lookup` for `net.connect` that always answers `address`: the connection goes where policy said. */
export function pinnedLookup(address: string): LookupFunction {
  const family = isIP(address);
  return (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) {
      (callback as unknown as (error: null, addresses: { address: string; family: number }[]) => void)(null, [
        { address, family },
      ]);
    } else {
      callback(null, address, family);
    }
  };
}
