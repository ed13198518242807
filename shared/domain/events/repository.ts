import type { Principal } from '../../auth/principal.js';
import { WEBHOOK_EVENTS, webhookEvent, type WebhookEventName } from '../../catalogues/webhook-events.js';
import { ProblemError } from '../../errors.js';
import { envelopeOf, type StoredEvent } from '../../events/outbox.js';
import type { Runtime } from '../../runtime.js';
import { eventStore } from '../../store/events.js';
import type { Page } from '../../store/pages.js';
import { unitOfWork } from '../../store/unit-of-work.js';
import { deliveryStore } from '../../store/webhook-deliveries/deliveries.js';
import { currentTokenAbilities } from '../tokens/repository.js';
import { deliveryBody, redactPayload } from '../webhook-deliveries/fan-out.js';
import { newDeliveryItem } from '../webhook-deliveries/creation.js';
import { publicDelivery } from '../webhook-deliveries/reads.js';
import type { WebhookDelivery } from '../webhook-deliveries/schema.js';
import { attemptMessage } from '../webhook-deliveries/state-machine.js';
import { loadWebhookEndpoint } from '../webhook-endpoints/repository.js';
import type { EventEnvelopeBody, ListEventsQuery } from './schema.js';

/** Reads and resends of stored events (DESIGN D6, D10, D12) over `eventStore` (shared/store). */

/**
 * The envelope as the caller may see it: `data` redacted for the caller's abilities, as for an endpoint it owned
 * (DESIGN D10).
 */
function envelopeFor(principal: Principal, event: StoredEvent): EventEnvelopeBody {
  const envelope = envelopeOf(event);
  return { ...envelope, data: redactPayload(envelope.data, [...principal.abilities]) as Record<string, unknown> };
}

/** The events whose minimum ability the caller holds (DESIGN D6: what its endpoints could subscribe to). */
function visibleTypes(principal: Principal): WebhookEventName[] {
  return WEBHOOK_EVENTS.filter((definition) => principal.abilities.has(definition.minimum_ability)).map(
    (definition) => definition.name,
  );
}

/** TOKEN_MISSING_ABILITY unless the caller holds the minimum ability of `type`. */
function requireVisible(principal: Principal, type: WebhookEventName): void {
  const ability = webhookEvent(type).minimum_ability;
  if (!principal.abilities.has(ability))
    throw new ProblemError('TOKEN_MISSING_ABILITY', `Reading ${type} events needs ${ability}, which this token lacks.`);
}

/**
 * Lists the team's events newest first (DESIGN D12 paging), as delivered (D10 applied for the caller),
 * filtered by type, project and creation time (inclusive), and only of the types whose minimum ability
 * the caller holds. Filters run in DynamoDB, so a page may be short while `next_cursor` is set.
 * Errors: TOKEN_MISSING_ABILITY for a `type` the caller may not read; VALIDATION_FAILED for a foreign cursor
 * or a time range whose start is after its end.
 */
export async function listEventEnvelopes(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  query: ListEventsQuery,
): Promise<Page<EventEnvelopeBody>> {
  if (query.type) requireVisible(principal, query.type);
  if (
    query.created_after &&
    query.created_before &&
    Date.parse(query.created_after) > Date.parse(query.created_before)
  ) {
    throw new ProblemError('VALIDATION_FAILED', 'created_after must not be later than created_before.', {
      errors: [{ path: 'created_after', message: 'must not be later than created_before' }],
    });
  }
  const types = query.type ? [query.type] : visibleTypes(principal);
  const page = await eventStore.page(runtime.store, principal.teamId, {
    createdAfterMs: query.created_after ? Date.parse(query.created_after) : undefined,
    createdBeforeMs: query.created_before ? Date.parse(query.created_before) : undefined,
    types: query.type || types.length < WEBHOOK_EVENTS.length ? types : undefined,
    project_id: query.project_id,
    limit: query.limit,
    cursor: query.cursor,
  });
  return { data: page.data.map((event) => envelopeFor(principal, event)), next_cursor: page.next_cursor };
}

/**
 * Reads one event of the caller's team as delivered. Errors: NOT_FOUND (absent, expired, another team's),
 * TOKEN_MISSING_ABILITY.
 */
export async function getEventEnvelope(
  runtime: Pick<Runtime, 'store'>,
  principal: Principal,
  eventId: string,
): Promise<EventEnvelopeBody> {
  const event = await eventStore.load(runtime.store, principal.teamId, eventId);
  if (!event) throw new ProblemError('NOT_FOUND', `No event ${eventId}.`);
  requireVisible(principal, event.type);
  return envelopeFor(principal, event);
}

/**
 * Sends one event again to one endpoint of the team: a new delivery (pending,
 * attempt 1 at once), whatever the endpoint subscribes to, as "send test event" does. The caller and
 * the endpoint's owner must both hold the event's minimum ability (D6: the owner is re-read).
 * Errors: NOT_FOUND (event or endpoint), TOKEN_MISSING_ABILITY (the caller), CONFLICT (the endpoint is
 * disabled, or its owner may not receive this event).
 */
export async function resendEventToEndpoint(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue' | 'eventsCommitted'>,
  principal: Principal,
  eventId: string,
  endpointId: string,
): Promise<WebhookDelivery> {
  const [event, endpoint] = await Promise.all([
    eventStore.load(runtime.store, principal.teamId, eventId),
    loadWebhookEndpoint(runtime, principal.teamId, endpointId),
  ]);
  if (!event) throw new ProblemError('NOT_FOUND', `No event ${eventId}.`);
  if (!endpoint) throw new ProblemError('NOT_FOUND', `No webhook endpoint ${endpointId}.`);
  requireVisible(principal, event.type);
  if (!endpoint.is_active)
    throw new ProblemError('CONFLICT', 'The endpoint is disabled; re-enable it with is_active: true first.');
  const ability = webhookEvent(event.type).minimum_ability;
  if (
    !(await currentTokenAbilities(runtime.store, [endpoint.owner_token_id])).get(endpoint.owner_token_id)?.has(ability)
  ) {
    throw new ProblemError(
      'CONFLICT',
      `The endpoint's owner no longer holds ${ability}, which ${event.type} needs; update the endpoint with a token that holds it.`,
    );
  }
  const delivery = await unitOfWork(runtime, principal.teamId, (tx) => {
    const item = newDeliveryItem(
      runtime.clock,
      principal.teamId,
      endpointId,
      event,
      deliveryBody(endpoint.owner_abilities, event),
    );
    deliveryStore.insert(tx, item);
    return item;
  });
  await runtime.deliveryQueue.send([attemptMessage(delivery, 1)], 0);
  return publicDelivery(delivery, false);
}
