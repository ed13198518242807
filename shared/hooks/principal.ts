import type { Principal } from '../auth/principal.js';

/**
 * The principal inbound hooks act as (DESIGN D22): the team the verified request belongs to, every project
 * of it, no abilities (a hook is not an operation: its authority is the provider's signature or secret,
 * already checked). `tokenId` is `hook:<source>` (e.g. `hook:telegram`, `hook:stripe`), never a token item.
 */
export function hookPrincipal(teamId: string, source: string): Principal {
  return { tokenId: `hook:${source}`, teamId, abilities: new Set(), projectIds: null };
}
