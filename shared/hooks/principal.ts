import type { Principal } from '../auth/principal.js';

/**
 * The principal inbound hooks act as (DESIGN D22): the team the verified request belongs to, every project
 * of it, no abilities (a hook is not an operation: its authority is the provider's signature or secret,
 * already checked). `tokenId` is `hook:<source>` (e.g. `hook:telegram`, `hook:stripe`), never a token item.
 */
export function hookPrincipal(teamId: string, source: string): Principal {
  return { tokenId: `hook:${source}`, teamId, abilities: new Set(), projectIds: null };
}

/**
 * The principal a project's public join page acts as (DESIGN D26): the project's team, narrowed to that one
 * project, holding only what joining needs — creating a subscriber (`project-user:update`) and its
 * subscription, by a free plan or a redeemed code (`project-subscription:create`). `tokenId` is `public:join`.
 */
export function joinPrincipal(teamId: string, projectId: string): Principal {
  return { tokenId: 'public:join', teamId, abilities: new Set(['project-user:update', 'project-subscription:create']), projectIds: [projectId] };
}
