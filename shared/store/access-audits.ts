import pMap from 'p-map';
import { isoTime } from '../clock.js';
import {
  findingCountAttribute,
  parseAccessAuditState,
  parseStoredAccessAudit,
  parseStoredFinding,
  type AccessAuditState,
  type AuditedAttribute,
  type StoredAccessAudit,
  type StoredFinding,
} from '../domain/access-audits/record.js';
import type { AccessAuditPhase, AccessAuditPolicy } from '../domain/access-audits/schema.js';
import { accessAuditScheduleAttributes, UNSCHEDULE_CLAUSE } from './access-audit-schedule.js';
import { conditionally, ITEM_ABSENT } from './expressions.js';
import { newRunningJobPut, pageStalled, runningSortKey, type StalledPage, failedJobUpdate } from './running-jobs.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from './keys.js';
import { queryPage, type Page } from './pages.js';
import type { Key, TransactionItem } from './requests.js';
import { ConditionFailedError, type Store } from './store.js';

/**
 * The access audit's persistence (DESIGN D34, D14), shaped like the import job's: one item per job in its project's
 * audits partition, beside the project's audit state whose `running_audit_id` lets one audit run at a time (set by a
 * conditional write, cleared when the job ends); findings in the audit's own partition. While a job is to finish it is
 * in the sparse running-audits index by the time of its last progress, so the sweeper restarts a stopped worker.
 */

const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;
/** Findings written at once while recording a page. */
const FINDING_WRITE_CONCURRENCY = 8;

/** The key of a job's item. */
function jobKey(job: Pick<StoredAccessAudit, 'team_id' | 'project_id' | 'id'>): Key {
  return keys.accessAudit(job.team_id, job.project_id, job.id);
}

/** What one page adds to its job: findings, the objects compared, the unlinked members seen. */
export interface AuditPageResult {
  findings: StoredFinding[];
  audited: Partial<Record<AuditedAttribute, number>>;
  unlinkedMembers: number;
}

/** Where the job goes after a page: the next page's phase and cursor, or `null` (done). */
export type AuditNext = { phase: AccessAuditPhase; cursor: string | null } | null;

/** Attempts of a start refused by an audit that has ended by the time the refusal is read. */
const START_ATTEMPTS = 3;

/** The update clearing the project's running audit when job `job` ends (conditional on it being that job). */
function clearRunning(job: StoredAccessAudit) {
  return {
    Update: {
      Key: keys.accessAuditState(job.team_id, job.project_id),
      UpdateExpression: 'REMOVE running_audit_id',
      ConditionExpression: 'running_audit_id = :id',
      ExpressionAttributeValues: { ':id': job.id },
    },
  };
}

/**
 * The access audit store adapter: a job's start, pages and failure, stalled jobs (for the sweeper), an audit's findings
 * and their repair, and a project's audit state; every method takes the Store port.
 */
export const accessAuditStore = {
  /**
   * Stores a new queued job, makes it the project's latest and running audit and sets the policy and schedule given, in
   * one transaction, unless an audit runs: then answers the running audit's id (and writes nothing); a refusal whose
   * audit has ended by the time it is read is tried again ({@link START_ATTEMPTS} in all). The next daily
   * audit: at `next.atMs` (epoch ms) when `next.move` (a project's first audit), else where it is (put at `next.atMs`
   * when `daily` brings back a project that was `off`); `off` takes the project out of the schedule index.
   */
  async start(
    store: Store,
    job: StoredAccessAudit,
    settings: { policy?: AccessAuditPolicy; schedule?: 'daily' | 'off' },
    nowMs: number,
    next: { atMs: number; move: boolean } = { atMs: nowMs, move: false },
  ): Promise<{ started: true } | { started: false; runningAuditId: string }> {
    const sets = ['latest_audit_id = :id', 'running_audit_id = :id', 'entity = :entity'];
    const values: Record<string, unknown> = { ':id': job.id, ':entity': entity.accessAuditState };
    const off = settings.schedule === 'off';
    // `off` leaves the schedule index; `daily` keeps the next audit where it is, or puts it a day on.
    if (!off && (next.move || settings.schedule === 'daily'))
      for (const [name, value] of Object.entries(
        accessAuditScheduleAttributes(job.team_id, job.project_id, next.atMs),
      )) {
        sets.push(next.move ? `${name} = :${name}` : `${name} = if_not_exists(${name}, :${name})`);
        values[`:${name}`] = value;
      }
    if (settings.policy) {
      sets.push('policy = :policy');
      values[':policy'] = settings.policy;
    }
    if (settings.schedule) {
      sets.push('schedule = :schedule');
      values[':schedule'] = settings.schedule;
    }
    const items: TransactionItem[] = [
      {
        Update: {
          Key: keys.accessAuditState(job.team_id, job.project_id),
          UpdateExpression: `SET ${sets.join(', ')}${off ? ` ${UNSCHEDULE_CLAUSE}` : ''}`,
          ConditionExpression: 'attribute_not_exists(running_audit_id)',
          ExpressionAttributeValues: values,
        },
      },
      newRunningJobPut(jobKey(job), entity.accessAudit, job, keys.runningAccessAuditsIndex, nowMs),
    ];
    for (let attempt = 1; ; attempt++) {
      try {
        await store.transactWrite(items);
        return { started: true };
      } catch (error) {
        if (!(error instanceof ConditionFailedError)) throw error;
        const state = await accessAuditStore.readState(store, job.team_id, job.project_id);
        if (state.running_audit_id) return { started: false, runningAuditId: state.running_audit_id };
        // The audit that was running ended between the write and the read: the start is tried again.
        if (attempt === START_ATTEMPTS) throw error;
      }
    }
  },

  /** A project's audit state (defaults when it was never audited). */
  async readState(store: Store, teamId: string, projectId: string): Promise<AccessAuditState> {
    const item = await store.get(keys.accessAuditState(teamId, projectId), { consistent: true });
    return parseAccessAuditState(item ?? {});
  },

  /** The stored job (strongly consistent) or null. Throws StoredRecordError for an item that does not match. */
  async load(store: Store, teamId: string, projectId: string, auditId: string): Promise<StoredAccessAudit | null> {
    const item = await store.get(keys.accessAudit(teamId, projectId, auditId), { consistent: true });
    return item ? parseStoredAccessAudit(item) : null;
  },

  /** One page of an audit's findings, in id order. */
  listFindings(
    store: Store,
    teamId: string,
    projectId: string,
    auditId: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<StoredFinding>> {
    return queryPage(store, {
      partition: keys.accessAuditFindingsPartition(teamId, projectId, auditId),
      sortKeyPrefix: sortKeyPrefix.accessAuditFinding,
      limit: query.limit,
      cursor: query.cursor,
      map: parseStoredFinding,
    });
  },

  /** One finding of an audit, or null. */
  async loadFinding(
    store: Store,
    teamId: string,
    projectId: string,
    auditId: string,
    findingId: string,
  ): Promise<StoredFinding | null> {
    const item = await store.get(keys.accessAuditFinding(teamId, projectId, auditId, findingId), { consistent: true });
    return item ? parseStoredFinding(item) : null;
  },

  /** Stores the findings of a page, each once: a page run again leaves those already stored as they are. */
  async putFindings(store: Store, job: StoredAccessAudit, findings: readonly StoredFinding[]): Promise<void> {
    await pMap(
      findings,
      (finding) =>
        conditionally(
          store.put({
            Item: {
              ...keys.accessAuditFinding(job.team_id, job.project_id, job.id, finding.id),
              entity: entity.accessAuditFinding,
              ...finding,
            },
            ConditionExpression: ITEM_ABSENT,
          }),
        ),
      { concurrency: FINDING_WRITE_CONCURRENCY },
    );
  },

  /**
   * Records one finished page (its findings stored first with {@link accessAuditStore.putFindings}): counts grow, the
   * cursor moves to `next` (null: the job `succeeded`, leaves the index and stops being the running audit), on
   * condition that the job is queued or running and has done exactly `job.pages` pages. False when not.
   */
  async recordPage(
    store: Store,
    job: StoredAccessAudit,
    result: AuditPageResult,
    next: AuditNext,
    nowMs: number,
  ): Promise<boolean> {
    const names: Record<string, string> = { '#status': 'status' };
    const values: Record<string, unknown> = {
      ':now': isoTime(nowMs),
      ':pages': job.pages,
      ':next_page': job.pages + 1,
      ':queued': 'queued',
      ':running': 'running',
    };
    const added: Record<string, number> = { ...result.audited, unlinked_members: result.unlinkedMembers };
    for (const finding of result.findings) {
      const name = findingCountAttribute(finding.kind);
      added[name] = (added[name] ?? 0) + 1;
      added.open_findings = (added.open_findings ?? 0) + 1;
    }
    const adds = Object.entries(added)
      .filter(([, count]) => count)
      .map(([name, count]) => {
        values[`:${name}`] = count;
        return `${name} :${name}`;
      });
    const sets = ['updated_at = :now', 'pages = :next_page'];
    const removes: string[] = [];
    if (next) {
      sets.push('#status = :running', 'phase = :phase', '#cursor = :cursor', `${INDEX_SK} = :sort`);
      names['#cursor'] = 'cursor';
      Object.assign(values, { ':phase': next.phase, ':cursor': next.cursor, ':sort': runningSortKey(nowMs, job.id) });
    } else {
      sets.push('#status = :succeeded', 'completed_at = :now', 'phase = :null', '#cursor = :null');
      names['#cursor'] = 'cursor';
      Object.assign(values, { ':succeeded': 'succeeded', ':null': null });
      removes.push(INDEX_PK, INDEX_SK);
    }
    const update = {
      Update: {
        Key: jobKey(job),
        UpdateExpression: `SET ${sets.join(', ')}${adds.length ? ` ADD ${adds.join(', ')}` : ''}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: '(#status = :queued OR #status = :running) AND pages = :pages',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      },
    };
    return conditionally(store.transactWrite(next ? [update] : [update, clearRunning(job)]));
  },

  /** Marks an unfinished job `failed` with `error`; it leaves the index and stops being the running audit. */
  recordFailure(store: Store, job: StoredAccessAudit, error: string, nowMs: number): Promise<boolean> {
    return conditionally(
      store.transactWrite([
        {
          Update: failedJobUpdate(jobKey(job), error, nowMs),
        },
        clearRunning(job),
      ]),
    );
  },

  /**
   * Marks finding `finding` repaired at `nowMs` and counts one open finding less on its audit, in one transaction,
   * on condition that it is open. False when it was repaired meanwhile.
   */
  markRepaired(store: Store, finding: StoredFinding, nowMs: number): Promise<boolean> {
    return conditionally(
      store.transactWrite([
        {
          Update: {
            Key: keys.accessAuditFinding(finding.team_id, finding.project_id, finding.audit_id, finding.id),
            UpdateExpression: 'SET #status = :repaired, repaired_at = :now, repair_error = :null',
            ConditionExpression: '#status = :open',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: {
              ':repaired': 'repaired',
              ':open': 'open',
              ':now': isoTime(nowMs),
              ':null': null,
            },
          },
        },
        {
          Update: {
            Key: keys.accessAudit(finding.team_id, finding.project_id, finding.audit_id),
            UpdateExpression: 'ADD open_findings :minus_one',
            ExpressionAttributeValues: { ':minus_one': -1 },
          },
        },
      ]),
    );
  },

  /** Records why the last repair of `finding` failed (it stays open). */
  async recordRepairError(store: Store, finding: StoredFinding, reason: string): Promise<void> {
    await conditionally(
      store.update({
        Key: keys.accessAuditFinding(finding.team_id, finding.project_id, finding.audit_id, finding.id),
        UpdateExpression: 'SET repair_error = :reason',
        ConditionExpression: '#status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':reason': reason, ':open': 'open' },
      }),
    );
  },

  /** Unfinished jobs (of any team) whose last progress is older than `beforeMs` (epoch ms): one page (≤ 100). */
  pageStalled(store: Store, beforeMs: number, startKey: Key | undefined): Promise<StalledPage<StoredAccessAudit>> {
    return pageStalled(store, keys.runningAccessAuditsIndex, beforeMs, startKey, parseStoredAccessAudit);
  },
};
