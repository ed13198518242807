import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { PUBLIC_DOCUMENTS } from './documents.js';
import { documentsModule } from './operations.js';

type Operations = typeof documentsModule.operations;

/** `GET /openapi.json`. */
export const getOpenApiDocument: OperationHandler<Operations['getOpenApiDocument']> = async () =>
  PUBLIC_DOCUMENTS.getOpenApiDocument();

/** `GET /webhook-events.json`. */
export const getWebhookEventsDocument: OperationHandler<Operations['getWebhookEventsDocument']> = async () =>
  PUBLIC_DOCUMENTS.getWebhookEventsDocument();

/** Every handler of the documents module. */
export const documentsHandlers = { getOpenApiDocument, getWebhookEventsDocument } satisfies HandlersOf<
  typeof documentsModule
>;
