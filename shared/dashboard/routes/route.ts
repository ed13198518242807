import type { ApiGatewayResult } from '../../http/api-gateway.js';
import type { DashboardRequest, SignedInRequest } from '../http.js';

/**
 * One dashboard route (DESIGN D21, D35): its method, its path under `/dashboard` (`:name` parameters are ids:
 * 1–80 of `A-Za-z0-9_-`), who may open it, and its page, loaded on first use (`import()` of the page module, so
 * a request loads only its route group's pages). A page gets the path's parameters by name.
 */

/** A page handler: the request and the path's parameters by name. */
export type Page<R> = (request: R, params: Record<string, string>) => Promise<ApiGatewayResult>;

/**
 * A route of the dashboard's table. `access`: `public` for anyone; `registration` for a session, even one that must
 * register a passkey first; `signed-in` for a full session. `page` resolves to null when the parameters name no page
 * (404).
 */
export type DashboardRoute =
  | {
      method: 'GET' | 'POST';
      path: string;
      access: 'public';
      /** A form posted before a session exists: it must carry the pre-session double-submit token. */
      presessionForm?: boolean;
      page: Loader<DashboardRequest>;
    }
  | { method: 'GET' | 'POST'; path: string; access: 'registration' | 'signed-in'; page: Loader<SignedInRequest> };

type Loader<R> = (params: Record<string, string>) => Promise<Page<R> | null>;

/** A signed-in GET route whose page is `pick(module)` of the lazily loaded `load()`. */
export function get<M>(
  path: string,
  load: () => Promise<M>,
  pick: (module: M) => Page<SignedInRequest>,
): DashboardRoute {
  return { method: 'GET', path, access: 'signed-in', page: async () => pick(await load()) };
}

/** A signed-in POST route (see {@link get}). */
export function post<M>(
  path: string,
  load: () => Promise<M>,
  pick: (module: M) => Page<SignedInRequest>,
): DashboardRoute {
  return { method: 'POST', path, access: 'signed-in', page: async () => pick(await load()) };
}
