import type { Principal } from '../../auth/principal.js';
import { requireProjectAccess } from '../../auth/authorize.js';
import { ProblemError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import type { Page } from '../../store/pages.js';
import { projectStore } from '../../store/projects.js';
import { subscriberStore } from '../../store/subscribers.js';
import { mayReadContact, toSubscriber } from './repository.js';
import type { ExportSubscribersQuery, ListSubscribersQuery, Subscriber, SubscriberExportPage } from './schema.js';

/** The lists of a project's subscribers (DESIGN D10, D12, D17): the filtered list and the NDJSON export. */

/**
 * Lists a project's subscribers in id order, paged (DESIGN D12), WITHOUT contact data (the list is for
 * `project-user:view-any`, D10). Filters (applied by DynamoDB, so a page may be short while
 * `next_cursor` is set): `status`, `plan_id` (a live subscription to that plan), `email_prefix`
 * (case-insensitive). Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED for
 * a cursor of another list.
 */
export async function listSubscribers(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Pick<ListSubscribersQuery, 'limit' | 'cursor' | 'status' | 'plan_id' | 'email_prefix'>,
): Promise<Page<Subscriber>> {
  requireProjectAccess(principal, projectId);
  const filters = { status: query.status, planId: query.plan_id, emailPrefix: query.email_prefix?.toLowerCase() };
  const [project, page] = await Promise.all([
    projectStore.exists(store, principal.teamId, projectId),
    subscriberStore.listPage(store, principal.teamId, projectId, { ...query, ...filters }, (item) =>
      toSubscriber(item, { contact: false }),
    ),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return page;
}

/**
 * One page of a project's subscriber export (`project-user:export`, DESIGN D17): NDJSON lines, one
 * `Subscriber` per line in the list's order, each ending with a newline; e-mail and phone only for
 * consented subscribers and only when the principal also holds `project-user:view` (D10). Page through
 * with `next_cursor`. Errors: NOT_FOUND (project absent, foreign or out of scope); VALIDATION_FAILED for
 * a cursor of another list.
 */
export async function exportSubscribers(
  store: Store,
  principal: Principal,
  projectId: string,
  query: Pick<ExportSubscribersQuery, 'limit' | 'cursor'>,
): Promise<SubscriberExportPage> {
  requireProjectAccess(principal, projectId);
  const contact = mayReadContact(principal);
  const [project, page] = await Promise.all([
    projectStore.exists(store, principal.teamId, projectId),
    subscriberStore.listPage(store, principal.teamId, projectId, query, (item) => toSubscriber(item, { contact })),
  ]);
  if (!project) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
  return {
    lines: page.data.map((subscriber) => `${JSON.stringify(subscriber)}\n`).join(''),
    count: page.data.length,
    next_cursor: page.next_cursor,
  };
}
