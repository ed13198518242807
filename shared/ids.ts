import { randomUUID } from 'node:crypto';
import { monotonicFactory } from 'ulid';

/** ULIDs made in the same millisecond still sort in creation order (token lists, delivery lists). */
const ulid = monotonicFactory();

/** A new domain object id: a random UUID v4 (DESIGN D12). */
export function newUuid(): string {
  return randomUUID();
}

/** A new event id: `evt_` + ULID (DESIGN D6), time-ordered by `nowMs` (epoch milliseconds). */
export function newEventId(nowMs: number): string {
  return `evt_${ulid(nowMs)}`;
}

/** A new delivery id: `dlv_` + ULID (DESIGN D12). */
export function newDeliveryId(nowMs: number): string {
  return `dlv_${ulid(nowMs)}`;
}

/** A new ULID (token ids, activity entries), time-ordered by `nowMs` (epoch milliseconds). */
export function newUlid(nowMs: number): string {
  return ulid(nowMs);
}
