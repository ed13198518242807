/**
 * Types of the undici modules that {@link ./undici.ts} imports one by one: the package declares its types for its
 * index only, and these modules export what the index re-exports.
 */
declare module 'undici/lib/dispatcher/pool.js' {
  import { Pool } from 'undici';
  export default Pool;
}
declare module 'undici/lib/dispatcher/agent.js' {
  import { Agent } from 'undici';
  export default Agent;
}
declare module 'undici/lib/core/connect.js' {
  import { buildConnector } from 'undici';
  export default buildConnector;
}
declare module 'undici/lib/api/api-request.js' {
  import type { Dispatcher } from 'undici';
  /** `Dispatcher.prototype.request`, called with the dispatcher as `this`. */
  export default function request(
    this: Dispatcher,
    options: Dispatcher.RequestOptions,
  ): Promise<Dispatcher.ResponseData>;
}
