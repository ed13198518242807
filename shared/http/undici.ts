/**
 * The parts of undici the service uses (a connection pool, an agent, a connector and `request`), imported from their
 * own modules. The package's index loads every part of undici (its fetch, WebSocket, caches and mock agents): about
 * 540 KB in a bundle, against 290 KB for these.
 *
 * @module
 */
import type { Dispatcher } from 'undici';
import dispatcherRequest from 'undici/lib/api/api-request.js';

/** undici's `Pool` (connections to one origin), `Agent` (a pool per origin) and `buildConnector` (TCP and TLS). */
export { default as Pool } from 'undici/lib/dispatcher/pool.js';
export { default as Agent } from 'undici/lib/dispatcher/agent.js';
export { default as buildConnector } from 'undici/lib/core/connect.js';

/**
 * Sends one request through `dispatcher` (undici's `dispatcher.request(options)`). `options.origin` is required for an
 * agent, not for a pool. Rejects with undici's errors (`UND_ERR_*` codes).
 */
export function sendRequest(
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> {
  return dispatcherRequest.call(dispatcher, options);
}
