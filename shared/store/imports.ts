import { isoTime } from '../clock.js';
import {
  countAttribute,
  IGNORED_ITEMS_ATTRIBUTE,
  parseStoredImport,
  type StoredImport,
} from '../domain/imports/record.js';
import type { ImportKind, ImportOutcome, ImportSkip } from '../domain/imports/schema.js';
import { conditionally } from './expressions.js';
import { newRunningJobPut, pageStalled, runningSortKey, type StalledPage, failedJobUpdate } from './running-jobs.js';
import { entity, keys, secondaryIndex, sortKeyPrefix } from './keys.js';
import { queryPage, type Page } from './pages.js';
import type { Key } from './requests.js';
import { itemWithKey, type Store } from './store.js';

/**
 * The import job's persistence (DESIGN D34, D14), shaped like the broadcast job's: one item per job in its project's
 * imports partition with a list entry beside it (newest first); while it is to finish it is in the sparse
 * running-imports index by the time of its last progress, so the sweeper restarts a job whose worker stopped.
 */

const INDEX_PK = secondaryIndex.partitionKey;
const INDEX_SK = secondaryIndex.sortKey;

/** The key of a job's item. */
function jobKey(job: Pick<StoredImport, 'team_id' | 'project_id' | 'id'>): Key {
  return keys.importJob(job.team_id, job.project_id, job.id);
}

/**
 * What one page adds to its job: counts by kind and outcome, ignored subscription items, and skipped objects to list.
 */
export interface ImportPageResult {
  counts: Partial<Record<ImportKind, Partial<Record<ImportOutcome, number>>>>;
  ignoredItems: number;
  skipped: ImportSkip[];
}

/** Where the job goes after a page: the next page's kind and cursor, or `null` (done). */
export type ImportNext = { kind: ImportKind; startingAfter: string | null } | null;

/**
 * The import job store adapter: a job's creation, read and list, its pages' progress, its failure, and stalled jobs
 * (for the sweeper); every method takes the Store port.
 */
export const importStore = {
  /** Stores a new queued job and its list entry at `nowMs` (epoch ms), in one transaction. */
  async create(store: Store, job: StoredImport, nowMs: number): Promise<void> {
    await store.transactWrite([
      newRunningJobPut(jobKey(job), entity.importJob, job, keys.runningImportsIndex, nowMs),
      {
        Put: {
          Item: {
            ...keys.importListEntry(job.team_id, job.project_id, job.created_at, job.id),
            entity: entity.importListEntry,
            import_id: job.id,
          },
        },
      },
    ]);
  },

  /** The stored job (strongly consistent) or null. Throws StoredRecordError for an item that does not match. */
  async load(store: Store, teamId: string, projectId: string, importId: string): Promise<StoredImport | null> {
    const item = await store.get(keys.importJob(teamId, projectId, importId), { consistent: true });
    return item ? parseStoredImport(item) : null;
  },

  /** One page of a project's jobs, newest first (the list entries, then one BatchGet). */
  async listPage(
    store: Store,
    teamId: string,
    projectId: string,
    query: { limit: number; cursor?: string },
  ): Promise<Page<StoredImport>> {
    const entries = await queryPage(store, {
      partition: keys.importsPartition(teamId, projectId),
      sortKeyPrefix: sortKeyPrefix.importListEntry,
      limit: query.limit,
      cursor: query.cursor,
      ascending: false,
      map: (item) => String(item.import_id),
    });
    const jobKeys = entries.data.map((id) => keys.importJob(teamId, projectId, id));
    const items = jobKeys.length ? await store.batchGet(jobKeys) : [];
    const data = jobKeys.flatMap((key) => {
      const item = itemWithKey(items, key);
      return item ? [parseStoredImport(item)] : [];
    });
    return { data, next_cursor: entries.next_cursor };
  },

  /**
   * Records one finished page: counts grow, the first skips join the list (up to `maxSkips` in all), the cursor moves
   * to `next` (null: the job `succeeded` and leaves the index), on condition that the job is queued or running and has
   * done exactly `job.pages` pages (a duplicate worker of the same page writes nothing). False when not.
   */
  recordPage(
    store: Store,
    job: StoredImport,
    result: ImportPageResult,
    next: ImportNext,
    nowMs: number,
    maxSkips: number,
  ): Promise<boolean> {
    const names: Record<string, string> = { '#status': 'status', '#skipped': 'skipped' };
    const values: Record<string, unknown> = {
      ':now': isoTime(nowMs),
      ':pages': job.pages,
      ':next_page': job.pages + 1,
      ':queued': 'queued',
      ':running': 'running',
      ':skips': result.skipped.slice(0, Math.max(0, maxSkips - job.skipped.length)),
    };
    const adds: string[] = [];
    for (const [kind, outcomes] of Object.entries(result.counts))
      for (const [outcome, count] of Object.entries(outcomes ?? {})) {
        if (!count) continue;
        const name = countAttribute(kind as ImportKind, outcome as ImportOutcome);
        names[`#${name}`] = name;
        values[`:${name}`] = count;
        adds.push(`#${name} :${name}`);
      }
    if (result.ignoredItems) {
      Object.assign(names, { '#ignored': IGNORED_ITEMS_ATTRIBUTE });
      values[':ignored'] = result.ignoredItems;
      adds.push('#ignored :ignored');
    }
    const sets = ['updated_at = :now', 'pages = :next_page', '#skipped = list_append(#skipped, :skips)'];
    const removes: string[] = [];
    if (next) {
      sets.push('#status = :running', 'kind = :kind', 'starting_after = :after', `${INDEX_SK} = :sort`);
      Object.assign(values, {
        ':kind': next.kind,
        ':after': next.startingAfter,
        ':sort': runningSortKey(nowMs, job.id),
      });
    } else {
      sets.push('#status = :succeeded', 'completed_at = :now', 'kind = :null', 'starting_after = :null');
      Object.assign(values, { ':succeeded': 'succeeded', ':null': null });
      removes.push(INDEX_PK, INDEX_SK);
    }
    return conditionally(
      store.update({
        Key: jobKey(job),
        UpdateExpression: `SET ${sets.join(', ')}${adds.length ? ` ADD ${adds.join(', ')}` : ''}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
        ConditionExpression: '(#status = :queued OR #status = :running) AND pages = :pages',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
  },

  /** Marks an unfinished job `failed` with `error` (it leaves the index). False when it finished meanwhile. */
  recordFailure(store: Store, job: StoredImport, error: string, nowMs: number): Promise<boolean> {
    return conditionally(store.update(failedJobUpdate(jobKey(job), error, nowMs)));
  },

  /** Unfinished jobs (of any team) whose last progress is older than `beforeMs` (epoch ms): one page (≤ 100). */
  pageStalled(store: Store, beforeMs: number, startKey: Key | undefined): Promise<StalledPage<StoredImport>> {
    return pageStalled(store, keys.runningImportsIndex, beforeMs, startKey, parseStoredImport);
  },
};
