import { webhookEventsDocument } from '../../catalogues/resources.js';
import { openApiDocument } from '../../http/openapi.js';
import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { documentsModule } from './operations.js';

const operations = documentsModule.operations;

/** `GET /openapi.json`. */
export const getOpenApiDocument: OperationHandler<typeof operations.getOpenApiDocument> = async () => openApiDocument();

/** `GET /webhook-events.json`. */
export const getWebhookEventsDocument: OperationHandler<typeof operations.getWebhookEventsDocument> = async () => webhookEventsDocument();

/** Every handler of the documents module. */
export const documentsHandlers = { getOpenApiDocument, getWebhookEventsDocument } satisfies HandlersOf<typeof documentsModule>;
