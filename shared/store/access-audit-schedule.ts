import { isoTime } from '../clock.js';
import { conditionally } from './expressions.js';
import { entity, keys, secondaryIndex } from './keys.js';
import type { Item, Key } from './requests.js';
import type { Store } from './store.js';

/**
 * The daily access audit's schedule (DESIGN D34, D14): a project's audit state item sits in the sparse schedule index
 * by the time of its next audit (`next_audit_at`), from the project's creation on. Its own index partition, apart from
 * the deadline index: the deadline worker's run pages it after the deadlines. Apart from the audits' store so project
 * creation carries only this.
 */

const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;
/** Due projects read per index query. */
const SCHEDULE_PAGE_SIZE = 100;

/** A project due for its daily audit, as the schedule index holds it. */
export interface ScheduledAccessAudit {
  teamId: string;
  projectId: string;
  /** When it was due (ISO 8601 UTC): the guard of the schedule's move. */
  dueAt: string;
  /** The project's audit state item (parse it with `parseAccessAuditState`). */
  state: Item;
}

/** The attributes placing a project's audit state in the schedule index, due at `dueAtMs` (epoch ms). */
export function accessAuditScheduleAttributes(teamId: string, projectId: string, dueAtMs: number): Item {
  const dueAt = isoTime(dueAtMs);
  return {
    team_id: teamId,
    project_id: projectId,
    next_audit_at: dueAt,
    [INDEX_PK]: keys.scheduledAccessAuditsIndex,
    [INDEX_SK]: `${dueAt}#${teamId}#${projectId}`,
  };
}

/** A new project's audit state (policy `report`, schedule `daily`), its first audit due at `dueAtMs` (epoch ms). */
export function newAccessAuditStateItem(teamId: string, projectId: string, dueAtMs: number): Item {
  return {
    ...keys.accessAuditState(teamId, projectId),
    entity: entity.accessAuditState,
    ...accessAuditScheduleAttributes(teamId, projectId, dueAtMs),
  };
}

/** The attributes that place an audit state in the schedule index (removed when its schedule is `off`). */
const SCHEDULE_ATTRIBUTES = ['next_audit_at', INDEX_PK, INDEX_SK] as const;

/** The update clause taking an audit state out of the schedule index (its schedule is `off`). */
export const UNSCHEDULE_CLAUSE = `REMOVE ${SCHEDULE_ATTRIBUTES.join(', ')}`;

/** The condition that the schedule still stands at `dueAt` (applied once). */
const dueAtGuard = (dueAt: string) => ({
  ConditionExpression: 'next_audit_at = :due',
  ExpressionAttributeValues: { ':due': dueAt },
});

/**
 * The access audit schedule adapter: the page of projects due (of every team), a project's next audit moved or taken
 * out of the index (each guarded by the due time read), and a project's audit settings.
 */
export const accessAuditScheduleStore = {
  /** Projects (of any team) whose next audit is due at `nowMs` (epoch ms), oldest first: one page. */
  async pageDue(
    store: Store,
    nowMs: number,
    startKey: Key | undefined,
  ): Promise<{ items: ScheduledAccessAudit[]; lastEvaluatedKey: Key | undefined }> {
    const result = await store.query({
      IndexName: secondaryIndex.name,
      KeyConditionExpression: `${INDEX_PK} = :index AND ${INDEX_SK} < :bound`,
      ExpressionAttributeValues: { ':index': keys.scheduledAccessAuditsIndex, ':bound': isoTime(nowMs + 1) },
      ExclusiveStartKey: startKey,
      Limit: SCHEDULE_PAGE_SIZE,
    });
    return {
      items: result.items.map((item) => ({
        teamId: String(item.team_id),
        projectId: String(item.project_id),
        dueAt: String(item.next_audit_at),
        state: item,
      })),
      lastEvaluatedKey: result.lastEvaluatedKey,
    };
  },

  /** Moves a project's next audit from `scheduled.dueAt` to `nextMs` (epoch ms); false when it was moved meanwhile. */
  move(store: Store, scheduled: ScheduledAccessAudit, nextMs: number): Promise<boolean> {
    const { next_audit_at: next, [INDEX_SK]: sortKey } = accessAuditScheduleAttributes(
      scheduled.teamId,
      scheduled.projectId,
      nextMs,
    );
    const guard = dueAtGuard(scheduled.dueAt);
    return conditionally(
      store.update({
        Key: keys.accessAuditState(scheduled.teamId, scheduled.projectId),
        UpdateExpression: `SET next_audit_at = :next, ${INDEX_SK} = :sort`,
        ...guard,
        ExpressionAttributeValues: { ...guard.ExpressionAttributeValues, ':next': next, ':sort': sortKey },
      }),
    );
  },

  /** Takes a project whose schedule is `off` out of the index, unless its schedule was moved meanwhile. */
  unschedule(store: Store, scheduled: ScheduledAccessAudit): Promise<boolean> {
    return conditionally(
      store.update({
        Key: keys.accessAuditState(scheduled.teamId, scheduled.projectId),
        UpdateExpression: UNSCHEDULE_CLAUSE,
        ...dueAtGuard(scheduled.dueAt),
      }),
    );
  },

  /** Removes the audit state of a deleted project, unless its schedule was moved meanwhile. */
  remove(store: Store, scheduled: ScheduledAccessAudit): Promise<boolean> {
    return conditionally(
      store.delete({
        Key: keys.accessAuditState(scheduled.teamId, scheduled.projectId),
        ...dueAtGuard(scheduled.dueAt),
      }),
    );
  },

  /**
   * Sets a project's audit policy and schedule (those given) and answers its audit state item after the change. A
   * project on the daily schedule stays where it is in the index, or (not in it: `off` before, or created before the
   * schedule was daily by default) is put in it, due at `nextAuditAtMs`; `off` takes it out of the index.
   */
  async updateSettings(
    store: Store,
    teamId: string,
    projectId: string,
    settings: { policy?: string; schedule?: string },
    nextAuditAtMs: number,
  ): Promise<Item> {
    const sets = ['entity = :entity', 'team_id = :team_id', 'project_id = :project_id'];
    const values: Record<string, unknown> = { ':entity': entity.accessAuditState };
    const scheduled = accessAuditScheduleAttributes(teamId, projectId, nextAuditAtMs);
    for (const [name, value] of Object.entries(scheduled)) {
      if (name !== 'team_id' && name !== 'project_id') {
        if (settings.schedule === 'off') continue;
        sets.push(`${name} = if_not_exists(${name}, :${name})`);
      }
      values[`:${name}`] = value;
    }
    for (const [name, value] of Object.entries(settings))
      if (value !== undefined) {
        sets.push(`${name} = :${name}`);
        values[`:${name}`] = value;
      }
    return (await store.update({
      Key: keys.accessAuditState(teamId, projectId),
      UpdateExpression: `SET ${sets.join(', ')}${settings.schedule === 'off' ? ` ${UNSCHEDULE_CLAUSE}` : ''}`,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }))!;
  },
};
