import { encodeTime } from 'ulid';
import type { StoredEvent } from '../events/outbox.js';
import { parseStoredEvent } from '../domain/events/record.js';
import { keys, sortKeyPrefix } from './keys.js';
import type { Store } from './store.js';
import { listFilter, queryPage, type ListCondition, type Page } from './pages.js';

/**
 * Reads of stored events (DESIGN D6, D12): events live in their team's partition (`TEAM#<team>`,
 * `EVENT#evt_<ULID>`, kept 30 days), so a time range is a key range (the ULID starts with its time) and
 * newest first is a backward query. They are written by the unit of work's `tx.emit`.
 */

/** The sort key of the first (`edge` low) or last (high) possible event id created in millisecond `ms`. */
function eventKeyAt(ms: number, edge: 'low' | 'high'): string {
  return `${sortKeyPrefix.event}evt_${encodeTime(Math.max(0, ms), 10)}${(edge === 'low' ? '0' : 'Z').repeat(16)}`;
}

/**
 * Which of a team's events a page holds: created within the range (epoch ms, inclusive), of `types` (all when
 * undefined) and of `project_id`.
 */
export interface EventSelection {
  createdAfterMs?: number;
  createdBeforeMs?: number;
  types?: readonly string[];
  project_id?: string;
  limit: number;
  cursor?: string;
}

/** The event store adapter, reads only: one stored event, and a page of the team's events. */
export const eventStore = {
  /** The stored event (eventually consistent: an event never changes after fan-out) or null. */
  async load(store: Store, teamId: string, eventId: string): Promise<StoredEvent | null> {
    const item = await store.get(keys.event(teamId, eventId), { consistent: false });
    return item ? parseStoredEvent(item) : null;
  },

  /**
   * One page of the team's events, newest first; the filters run in DynamoDB, so a page may be short while
   * `next_cursor` is set. Errors: VALIDATION_FAILED for a cursor of another list.
   */
  page(store: Store, teamId: string, selection: EventSelection): Promise<Page<StoredEvent>> {
    const conditions: ListCondition[] = [{ attribute: 'project_id', equals: selection.project_id }];
    if (selection.types) conditions.unshift({ attribute: 'type', oneOf: selection.types });
    return queryPage(store, {
      partition: keys.teamPartition(teamId),
      sortKeyPrefix: sortKeyPrefix.event,
      sortKeyRange: {
        from:
          selection.createdAfterMs === undefined ? sortKeyPrefix.event : eventKeyAt(selection.createdAfterMs, 'low'),
        to:
          selection.createdBeforeMs === undefined
            ? `${sortKeyPrefix.event}~`
            : eventKeyAt(selection.createdBeforeMs, 'high'),
      },
      ascending: false,
      limit: selection.limit,
      cursor: selection.cursor,
      filter: listFilter(conditions),
      map: parseStoredEvent,
    });
  },
};
