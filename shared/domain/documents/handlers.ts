import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { PUBLIC_DOCUMENTS } from './documents.js';
import { documentsModule } from './operations.js';

const operations = documentsModule.operations;

/** `GET /openapi.json`. */
export const getOpenApiDocument: OperationHandler<typeof operations.getOpenApiDocument> = async () => PUBLIC_DOCUMENTS.getOpenApiDocument();

/** `GET /webhook-events.json`. */
export const getWebhookEventsDocument: OperationHandler<typeof operations.getWebhookEventsDocument> = async () => PUBLIC_DOCUMENTS.getWebhookEventsDocument();

/** Every handler of the documents module. */
export const documentsHandlers = { getOpenApiDocument, getWebhookEventsDocument } satisfies HandlersOf<typeof documentsModule>;
