import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { eventsModule } from './operations.js';
import { getEventEnvelope, listEventEnvelopes, resendEventToEndpoint } from './repository.js';

type Operations = typeof eventsModule.operations;

/** `GET /v1/events`. */
export const listEvents: OperationHandler<Operations['listEvents']> = async (input, { runtime, principal }) =>
  listEventEnvelopes(runtime, principal, input);

/** `GET /v1/events/{id}`. */
export const getEvent: OperationHandler<Operations['getEvent']> = async (input, { runtime, principal }) =>
  getEventEnvelope(runtime, principal, input.id);

/** `POST /v1/events/{id}/resend`. */
export const resendEvent: OperationHandler<Operations['resendEvent']> = async (input, { runtime, principal }) =>
  resendEventToEndpoint(runtime, principal, input.id, input.endpoint_id);

/** Every handler of the events module. */
export const eventsHandlers = { listEvents, getEvent, resendEvent } satisfies HandlersOf<typeof eventsModule>;
