/**
 * Checks an event envelope against what the service publishes (`GET /webhook-events.json`): the
 * envelope fields of the interface and the event's `data` against its JSON Schema, with ajv (draft
 * 2020-12). Used by every test that sees events, so a payload that drifts from its published schema fails.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { webhookEventsDocument, type WebhookEventsDocument } from '../../shared/catalogues/resources.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { keys } from '../../shared/store/keys.js';
import type { Store } from '../../shared/store/store.js';

/**
 * The ajv (draft 2020-12, formats) validator of each event's `data` object, by event name: undefined for an event the
 * document does not publish.
 */
export interface EventDataValidators {
  get(eventName: string): ValidateFunction | undefined;
}

/**
 * The `data_schema` validators of every event of a webhook events document — the body of
 * `GET /webhook-events.json` as a running service serves it, so a test can hold deliveries to what is
 * actually published. Each is compiled on first use (compiling all 71 up front costs about two seconds per worker).
 */
export function compileEventDataValidators(document: WebhookEventsDocument): EventDataValidators {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  const schemas = new Map(document.events.map((event) => [event.name, event.data_schema]));
  const compiled = new Map<string, ValidateFunction>();
  return {
    get(eventName) {
      const schema = schemas.get(eventName);
      if (schema === undefined) return undefined;
      let validate = compiled.get(eventName);
      if (!validate) compiled.set(eventName, (validate = ajv.compile(schema)));
      return validate;
    },
  };
}

const validators = compileEventDataValidators(webhookEventsDocument());

/**
 * The validator of one event's whole envelope as an OpenAPI 3.1 document served (`GET /openapi.json`)
 * describes it in its `webhooks` section (the request body the webhook POSTs, `$ref`s into its components
 * resolved): a second published description every delivery can be held to. Compiled on first use per event
 * name (compiling them all up front costs seconds); an event the section lacks throws.
 */
export function openApiWebhookValidators(openApi: {
  webhooks: Record<string, unknown>;
}): (eventName: string) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (ajv: Ajv2020) => void)(ajv);
  ajv.addSchema(openApi, 'openapi.json');
  const compiled = new Map<string, ValidateFunction>();
  return (eventName) => {
    if (!(eventName in openApi.webhooks)) throw new Error(`openapi.json has no webhook ${eventName}`);
    const pointer = `openapi.json#/webhooks/${eventName.replaceAll('~', '~0').replaceAll('/', '~1')}/post/requestBody/content/application~1json/schema`;
    if (!compiled.has(eventName)) compiled.set(eventName, ajv.compile({ $ref: pointer }));
    return compiled.get(eventName)!;
  };
}

/**
 * Asserts that `envelope` is a published event: `{ id: evt_…, type, created_at, api_version, project_id, data }`
 * with `data` valid against its event's schema in `published` (default: the catalogue's own document).
 */
export function expectPublishedEvent(
  envelope: {
    id: string;
    type: string;
    created_at: string;
    api_version: string;
    project_id: string | null;
    data: unknown;
  },
  published: EventDataValidators = validators,
): void {
  expect(envelope.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
  expect(envelope.api_version).toBe('2026-05-01');
  const validate = published.get(envelope.type);
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
  const events = result.items.map(
    (item) =>
      ({
        id: item.id,
        type: item.type,
        created_at: item.created_at,
        api_version: item.api_version,
        project_id: item.project_id,
        data: item.data,
      }) as EventEnvelope,
  );
  for (const event of events) expectPublishedEvent(event);
  return events;
}

/**
 * Reads one team's outbox events step by step, for tests that check what each step emitted: {@link next}
 * resolves with the events not returned before (oldest first, each checked by {@link teamEvents}).
 */
export class TeamEventCursor {
  private seen = 0;

  constructor(
    private readonly store: Store,
    private readonly teamId: string,
  ) {}

  /** The team's events written since the last call (all of them on the first call). */
  async next(): Promise<EventEnvelope[]> {
    const events = await teamEvents(this.store, this.teamId);
    const fresh = events.slice(this.seen);
    this.seen = events.length;
    return fresh;
  }
}
