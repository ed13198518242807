import type { PlatformType } from '../catalogues/platform-types.js';
import { parseStoredProjectId, parseStoredProjectTeam } from '../domain/projects/record.js';
import { Project, type ProjectStatus } from '../domain/projects/schema.js';
import type { ProblemError } from '../errors.js';
import * as z from '../schemas/zod.js';
import { recordParser, revisionOf } from './records.js';
import {
  ITEM_ABSENT_CONDITION,
  ITEM_EXISTS_CONDITION,
  allOf,
  existsAtRevisionOf,
  setFields,
  type Condition,
} from './expressions.js';
import { entity, keys, sortKeyPrefix } from './keys.js';
import { decodeCursor, encodeCursor, listFilter, queryPage, type Page } from './pages.js';
import type { Item } from './requests.js';
import { itemWithKey, type Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The project store (DESIGN D14, D26): one item per project in its team's partition (`PROJECT#<uuid>`) with
 * `revision`, `plan_ids` (string set) and `live_subscription_count` (absent = 0); an id-to-team item per
 * project for the public pages. Reads return stored items for the domain's parsers; writes join a unit of work.
 */

/** The condition "no live subscriptions" on a project or plan item (the counter absent or at most 0). */
export const NO_LIVE_SUBSCRIPTIONS: Condition = {
  expression: '(attribute_not_exists(live_subscription_count) OR live_subscription_count <= :zero_live)',
  values: { ':zero_live': 0 },
};

/** A project item read for its platform type (projection `platform_type`). */
const parseProjectPlatformType = recordParser(entity.project, z.pick(Project, { platform_type: true }));

/** The public fields a project change writes. */
const CHANGED_FIELDS = [
  'name',
  'description',
  'status',
  'bot',
  'payment_provider',
  'resources',
  'archived_at',
  'time_zone',
  'updated_at',
] as const;

/**
 * The project store adapter: reads and lists of the team's projects, a project's team by its id alone (Store port),
 * and the writes of a project and its plan set added to a transaction (changes conditional on the revision read).
 */
export const projectStore = {
  /** The stored project item of the team (strongly consistent), or undefined. */
  async read(store: Store, teamId: string, projectId: string): Promise<Item | undefined> {
    return store.get(keys.project(teamId, projectId));
  },

  /** True when the team has project `projectId` (strongly consistent, key only). */
  async exists(store: Store, teamId: string, projectId: string): Promise<boolean> {
    return (await store.get(keys.project(teamId, projectId), { projection: 'pk' })) !== undefined;
  },

  /** The platform type of the team's project (strongly consistent, one attribute read), or undefined when absent. */
  async platformTypeOf(store: Store, teamId: string, projectId: string): Promise<PlatformType | undefined> {
    const item = await store.get(keys.project(teamId, projectId), { projection: 'platform_type' });
    return item ? parseProjectPlatformType(item).platform_type : undefined;
  },

  /** The team of project `projectId` (the public pages know only the project id, D26), or null. One GetItem. */
  async teamOf(store: Store, projectId: string): Promise<string | null> {
    const item = await store.get(keys.projectTeam(projectId));
    return item ? parseStoredProjectTeam(item).team_id : null;
  },

  /** The team item and its project item, read together (strongly consistent, one BatchGetItem), each when present. */
  async readWithTeam(
    store: Store,
    teamId: string,
    projectId: string,
  ): Promise<{ team: Item | undefined; project: Item | undefined }> {
    const items = await store.batchGet([keys.team(teamId), keys.project(teamId, projectId)]);
    return {
      team: itemWithKey(items, keys.team(teamId)),
      project: itemWithKey(items, keys.project(teamId, projectId)),
    };
  },

  /** The ids among `projectIds` that name projects of `teamId` (one BatchGetItem of ≤ 100 ids). */
  async existingIds(store: Store, teamId: string, projectIds: readonly string[]): Promise<Set<string>> {
    const items = await store.batchGet(projectIds.map((projectId) => keys.project(teamId, projectId)));
    return new Set(items.map((item) => parseStoredProjectId(item).id));
  },

  /**
   * One page of the team's projects in id order, optionally only `status` (D12). Errors: VALIDATION_FAILED (cursor).
   */
  async listPage<T>(
    store: Store,
    teamId: string,
    query: { limit: number; cursor?: string; status?: ProjectStatus },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    return queryPage(store, {
      partition: keys.teamPartition(teamId),
      sortKeyPrefix: sortKeyPrefix.project,
      limit: query.limit,
      cursor: query.cursor,
      map,
      filter: listFilter([{ attribute: 'status', equals: query.status }]),
    });
  },

  /**
   * One page of the projects `projectIds` of the team in the team-wide list's key order and cursor format, read by
   * key (one BatchGetItem): the cursor only ever holds one of these ids. Errors: VALIDATION_FAILED (cursor).
   */
  async listByIds<T>(
    store: Store,
    teamId: string,
    projectIds: readonly string[],
    query: { limit: number; cursor?: string },
    map: (item: Item) => T,
  ): Promise<Page<T>> {
    const partition = keys.teamPartition(teamId);
    const start = decodeCursor(query.cursor, partition, { sortKeyPrefix: sortKeyPrefix.project });
    const after = typeof start?.sk === 'string' ? start.sk : '';
    const remaining = [...new Set(projectIds)]
      .map((projectId) => keys.project(teamId, projectId))
      .filter((key) => key.sk > after)
      .sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
    const pageKeys = remaining.slice(0, query.limit);
    const items = (await store.batchGet(pageKeys)).sort((a, b) => (String(a.sk) < String(b.sk) ? -1 : 1));
    const last = pageKeys.at(-1);
    return {
      data: items.map(map),
      next_cursor: remaining.length > pageKeys.length && last ? encodeCursor(last) : null,
    };
  },

  /** Adds to `tx` a new project (revision 1) and its id-to-team item, each only if absent. */
  create(tx: Transaction, teamId: string, project: Project): void {
    tx.put(
      { ...keys.project(teamId, project.id), entity: entity.project, team_id: teamId, ...project, revision: 1 },
      { condition: ITEM_ABSENT_CONDITION.expression },
    );
    tx.put(
      { ...keys.projectTeam(project.id), entity: entity.projectTeam, team_id: teamId, project_id: project.id },
      { condition: ITEM_ABSENT_CONDITION.expression },
    );
  },

  /**
   * Adds to `tx` the update of a project's public fields to `next` (revision + 1), conditional on the revision
   * of `read` and, with `noLiveSubscriptions`, on the project having no live subscriptions.
   */
  writeChange(
    tx: Transaction,
    teamId: string,
    read: Item,
    next: Project,
    options: { noLiveSubscriptions?: boolean } = {},
  ): void {
    const set = setFields(Object.fromEntries(CHANGED_FIELDS.map((field) => [field, next[field]])));
    const condition = allOf(existsAtRevisionOf(read), options.noLiveSubscriptions ? NO_LIVE_SUBSCRIPTIONS : undefined);
    tx.update(keys.project(teamId, next.id), {
      expression: `SET ${set.clause}, revision = :next_revision`,
      condition: condition.expression,
      names: set.names,
      values: { ...set.values, ...condition.values, ':next_revision': revisionOf(entity.project, read) + 1 },
    });
  },

  /**
   * Adds to `tx` the deletion of the project as read, with its plans `planIds` and its id-to-team item,
   * conditional on its revision, no live subscriptions and its plan set being exactly `planIds`.
   */
  deleteWithPlans(tx: Transaction, teamId: string, read: Item, projectId: string, planIds: readonly string[]): void {
    const planValues: Record<string, unknown> = {};
    const planConditions = planIds.map((planId, index) => {
      planValues[`:plan${index}`] = planId;
      return `contains(plan_ids, :plan${index})`;
    });
    if (planIds.length > 0) planValues[':plan_count'] = planIds.length;
    const plans: Condition = {
      expression:
        planIds.length === 0
          ? 'attribute_not_exists(plan_ids)'
          : ['size(plan_ids) = :plan_count', ...planConditions].join(' AND '),
      values: planValues,
    };
    const condition = allOf(existsAtRevisionOf(read), NO_LIVE_SUBSCRIPTIONS, plans);
    tx.delete(keys.project(teamId, projectId), { condition: condition.expression, values: condition.values });
    for (const planId of planIds) tx.delete(keys.plan(teamId, planId));
    tx.delete(keys.projectTeam(projectId));
  },

  /** Adds to `tx` a check that the project still exists; `problem` is what its absence means. */
  checkExists(tx: Transaction, teamId: string, projectId: string, problem: () => ProblemError): void {
    tx.check(keys.project(teamId, projectId), {
      condition: ITEM_EXISTS_CONDITION.expression,
      onConditionFailed: problem,
    });
  },

  /**
   * Adds to `tx` plan `planId` to the project's plan set, conditional on the project being active with fewer than
   * `maxPlans`.
   */
  addPlan(tx: Transaction, teamId: string, projectId: string, planId: string, maxPlans: number): void {
    tx.update(keys.project(teamId, projectId), {
      expression: 'ADD plan_ids :plan_id',
      condition: `${ITEM_EXISTS_CONDITION.expression} AND #status = :active AND (attribute_not_exists(plan_ids) OR size(plan_ids) < :max_plans)`,
      names: { '#status': 'status' },
      values: { ':plan_id': new Set([planId]), ':active': 'active', ':max_plans': maxPlans },
    });
  },

  /** Adds to `tx` taking plan `planId` out of the project's plan set (the project must exist). */
  removePlan(tx: Transaction, teamId: string, projectId: string, planId: string): void {
    tx.update(keys.project(teamId, projectId), {
      expression: 'DELETE plan_ids :plan_id',
      condition: ITEM_EXISTS_CONDITION.expression,
      values: { ':plan_id': new Set([planId]) },
    });
  },
};
