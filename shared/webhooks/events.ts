import type { TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { API_VERSION } from '../catalogues/version.js';
import { webhookEvent, type WebhookEventName } from '../catalogues/webhook-events.js';
import type { Clock } from '../clock.js';
import { isoTime } from '../clock.js';
import { newEventId } from '../ids.js';
import { keys } from '../store/keys.js';
import type { Store } from '../store/store.js';

/** Events stay in the table 30 days (the outbox is housekeeping after fan-out). */
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

type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/**
 * Builds an event and the outbox `Put` to include in the same transaction as the state change that
 * caused it (DESIGN D6: no change without its event, no event without its change). The data is
 * validated against the event's zod schema; a mismatch is a programming error and throws.
 * `project_id` is forced to null for events that are not project-scoped.
 */
export function outboxEvent(
  store: Store,
  clock: Clock,
  input: {
    teamId: string;
    type: WebhookEventName;
    projectId: string | null;
    data: Record<string, unknown>;
    /** The caller writes the event's deliveries itself in the same transaction (send test event): the event is stored as already fanned out, outside the outbox index. */
    deliveredDirectly?: { deliveryCount: number };
  },
): { event: StoredEvent; put: TransactItem } {
  const definition = webhookEvent(input.type);
  const nowMs = clock.nowMs();
  const data = definition.data_schema.parse(input.data) as Record<string, unknown>;
  const event: StoredEvent = {
    id: newEventId(nowMs),
    type: input.type,
    created_at: isoTime(nowMs),
    api_version: API_VERSION,
    project_id: definition.project_scoped ? input.projectId : null,
    data,
    team_id: input.teamId,
  };
  return {
    event,
    put: {
      Put: {
        TableName: store.tableName,
        Item: {
          ...keys.event(input.teamId, event.id),
          entity: 'event',
          ...event,
          ...(input.deliveredDirectly
            ? { fanned_out_at: event.created_at, delivery_count: input.deliveredDirectly.deliveryCount }
            : { gsi1pk: keys.outboxIndex, gsi1sk: event.id }),
          expires_at: Math.floor(nowMs / 1000) + EVENT_RETENTION_SECONDS,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  };
}

/** The envelope a receiver gets: the stored event without its team. */
export function envelopeOf(event: StoredEvent): EventEnvelope {
  return { id: event.id, type: event.type, created_at: event.created_at, api_version: event.api_version, project_id: event.project_id, data: event.data };
}
