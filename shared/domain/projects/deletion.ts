import type { Principal } from '../../auth/principal.js';
import { ProblemError } from '../../errors.js';
import { countUsage } from '../billing/repository.js';
import { retryOnLostRace } from '../../store/optimistic.js';
import { couponStore } from '../../store/coupons.js';
import { messageTemplateStore } from '../../store/message-templates.js';
import { projectStore } from '../../store/projects.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { CREDENTIAL_KINDS, deleteCredential, deleteSubjectCredentials } from '../../credentials/repository.js';
import { liveSubscriptionsOf, loadProject, planIdsOf, toProject } from './repository.js';

/**
 * Deleting a project (DESIGN D6, D14): only without live subscriptions, with its plans, its links and its credentials.
 */

/**
 * Deletes a project that has no live subscriptions, with its plans, its links and its credentials (the
 * subscribers' `discord_user` ones, its message templates and coupons right after the transaction), and emits
 * `project.deleted` (the project as it was), all in one transaction conditional on the revision, the
 * live-subscription counter and the plan set read, so a plan or subscription added meanwhile makes the
 * delete try again. Errors: NOT_FOUND; CONFLICT (live subscriptions, or a project that kept changing).
 */
export async function deleteProject(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
): Promise<{ id: string; deleted: true }> {
  return retryOnLostRace(
    async () => {
      const item = await loadProject(runtime.store, principal, projectId);
      const live = liveSubscriptionsOf(item);
      if (live > 0)
        throw new ProblemError(
          'CONFLICT',
          `Project ${projectId} has ${live} live subscription(s); a project can be deleted only when none is live (cancel them, or archive the project instead).`,
        );
      const project = toProject(item);
      const planIds = planIdsOf(item);
      const deleted = await unitOfWork(runtime, principal.teamId, (tx) => {
        projectStore.deleteWithPlans(tx, principal.teamId, item, projectId, planIds);
        countUsage(tx, principal.teamId, 'projects', -1);
        for (const kind of CREDENTIAL_KINDS) deleteCredential(tx, projectId, kind);
        tx.emit({ type: 'project.deleted', projectId, data: { project } });
        return { id: projectId, deleted: true as const };
      });
      // Too many for the transaction, so after it: the subscribers' own credentials (Discord OAuth2 tokens), the
      // project's saved message templates, its coupons and promotion codes.
      await deleteSubjectCredentials(runtime.store, projectId, 'discord_user');
      await messageTemplateStore.removeAll(runtime.store, principal.teamId, projectId);
      await couponStore.removeAll(runtime.store, principal.teamId, projectId);
      return deleted;
    },
    {
      exhausted: () =>
        new ProblemError(
          'CONFLICT',
          `Project ${projectId} kept changing while it was being deleted; read it again and retry.`,
        ),
    },
  );
}
