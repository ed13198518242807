import { API_VERSION } from '../catalogues/version.js';
import { webhookEvent, type WebhookEventName } from '../catalogues/webhook-events.js';
import type { Clock } from '../clock.js';
import { isoTime } from '../clock.js';
import { newEventId } from '../ids.js';
import { entity, keys, secondaryIndex, workerIndexShard } from '../store/keys.js';
import type { Item } from '../store/requests.js';
import { ttlAttribute } from '../store/ttl.js';

/** Events stay in the table 30 days (seconds; the outbox is housekeeping after fan-out). */
const EVENT_RETENTION_SECONDS = 30 * 24 * 60 * 60;

/** The webhook envelope (interface "Events" → "Envelope"). */
export interface EventEnvelope {
  /** `evt_` + ULID (DESIGN D6); equals the `SVC-Event-Id` header. */
  id: string;
  type: WebhookEventName;
  created_at: string;
  /** `2026-05-01` (interface "Versioning"). */
  api_version: string;
  /** Null for team-scoped and billing events. */
  project_id: string | null;
  data: Record<string, unknown>;
}

/** An outbox event as stored: the envelope plus its team. */
export interface StoredEvent extends EventEnvelope {
  team_id: string;
}

/** What a state change emits: the event's name, project and data (validated against the catalogue). */
export interface EventToEmit {
  type: WebhookEventName;
  /** Forced to null for events that are not project-scoped. */
  projectId: string | null;
  data: Record<string, unknown>;
  /**
   * The caller writes the event's deliveries itself in the same transaction (send test event): the
   * event is stored as already fanned out, outside the outbox index.
   */
  deliveredDirectly?: { deliveryCount: number };
}

/**
 * Builds a stored event and its outbox item (D6) for `tx.emit`; throws when `data` fails the event's schema (a
 * programming error). Outbox sort key: creation time (epoch ms) then id (D14), not the id's ULID time, which the
 * monotonic factory carries forward when the clock goes back.
 */
export function outboxItem(clock: Clock, teamId: string, input: EventToEmit): { event: StoredEvent; item: Item } {
  const definition = webhookEvent(input.type);
  const nowMs = clock.nowMs();
  const data = definition.data_schema.parse(input.data);
  const event: StoredEvent = {
    id: newEventId(nowMs),
    type: input.type,
    created_at: isoTime(nowMs),
    api_version: API_VERSION,
    project_id: definition.project_scoped ? input.projectId : null,
    data,
    team_id: teamId,
  };
  return {
    event,
    item: {
      ...keys.event(teamId, event.id),
      entity: entity.event,
      ...event,
      ...(input.deliveredDirectly
        ? { fanned_out_at: event.created_at, delivery_count: input.deliveredDirectly.deliveryCount }
        : {
            [secondaryIndex.partitionKey]: keys.outboxIndex(workerIndexShard(event.id)),
            [secondaryIndex.sortKey]: keys.timeIndexSortKey(nowMs, event.id),
          }),
      expires_at: ttlAttribute(nowMs, EVENT_RETENTION_SECONDS),
    },
  };
}

/** The envelope a receiver gets: the stored event without its team. */
export function envelopeOf(event: StoredEvent): EventEnvelope {
  return {
    id: event.id,
    type: event.type,
    created_at: event.created_at,
    api_version: event.api_version,
    project_id: event.project_id,
    data: event.data,
  };
}
