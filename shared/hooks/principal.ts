import type { Principal } from '../auth/principal.js';
import { getProject } from '../domain/projects/repository.js';
import type { Project } from '../domain/projects/schema.js';
import { ProblemError } from '../errors.js';
import type { Store } from '../store/store.js';

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
  return {
    tokenId: 'public:join',
    teamId,
    abilities: new Set(['project-user:update', 'project-subscription:create']),
    projectIds: [projectId],
  };
}

/**
 * Project `projectId` of team `teamId`, which a verified hook request names, read as that hook's
 * {@link hookPrincipal} (one strongly consistent GetItem); null when it does not exist (deleted since).
 */
export async function hookProject(
  store: Store,
  teamId: string,
  projectId: string,
  source: string,
): Promise<Project | null> {
  try {
    return await getProject(store, hookPrincipal(teamId, source), projectId);
  } catch (error) {
    if (error instanceof ProblemError && error.code === 'NOT_FOUND') return null;
    throw error;
  }
}
