import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { eventsModule } from './operations.js';
import { getEventEnvelope, listEventEnvelopes, resendEventToEndpoint } from './repository.js';

const operations = eventsModule.operations;

/** `GET /v1/events`. */
export const listEvents: OperationHandler<typeof operations.listEvents> = async (input, { runtime, principal }) => listEventEnvelopes(runtime, principal, input);

/** `GET /v1/events/{id}`. */
export const getEvent: OperationHandler<typeof operations.getEvent> = async (input, { runtime, principal }) => getEventEnvelope(runtime, principal, input.id);

/** `POST /v1/events/{id}/resend`. */
export const resendEvent: OperationHandler<typeof operations.resendEvent> = async (input, { runtime, principal }) => resendEventToEndpoint(runtime, principal, input.id, input.endpoint_id);

/** Every handler of the events module. */
export const eventsHandlers = { listEvents, getEvent, resendEvent } satisfies HandlersOf<typeof eventsModule>;
