/**
 * Checks an event envelope against what the service publishes (`GET /webhook-events.json`): the
 * envelope fields of the interface and the event's `data` against its JSON Schema, with ajv (draft
 * 2020-12). Used by every test that sees events, so a payload that drifts from its published schema fails.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { webhookEventsDocument } from '../../shared/catalogues/resources.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import type { Store } from '../../shared/store/store.js';

const ajv = new Ajv2020({ strict: false, allErrors: true });
(addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
const validators = new Map(webhookEventsDocument().events.map((event) => [event.name, ajv.compile(event.data_schema)]));

/** Asserts that `envelope` is a published event: `{ id: evt_…, type, created_at, api_version, project_id, data }` with valid `data`. */
export function expectPublishedEvent(envelope: { id: string; type: string; created_at: string; api_version: string; project_id: string | null; data: unknown }): void {
  expect(envelope.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
  expect(envelope.api_version).toBe('2026-05-01');
  const validate = validators.get(envelope.type);
  expect(validate, `unknown event ${envelope.type}`).toBeDefined();
  const valid = validate!(envelope.data);
  expect(valid, `${envelope.type}: ${JSON.stringify(validate!.errors)}`).toBe(true);
}

/**
 * Every event the team's operations wrote to the outbox, oldest first (one strongly consistent query of the
 * team partition), each checked with {@link expectPublishedEvent}.
 */
export async function teamEvents(store: Store, teamId: string): Promise<EventEnvelope[]> {
  const result = await store.query({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
    ExpressionAttributeValues: { ':pk': keys.teamPartition(teamId), ':prefix': keys.event(teamId, '').sk },
    ConsistentRead: true,
  });
  const events = result.items.map((item) => ({ id: item.id, type: item.type, created_at: item.created_at, api_version: item.api_version, project_id: item.project_id, data: item.data }) as EventEnvelope);
  for (const event of events) expectPublishedEvent(event);
  return events;
}
