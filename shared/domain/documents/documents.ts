import { webhookEventsDocument } from '../../catalogues/resources.js';
import { openApiDocument } from '../../http/openapi.js';

/**
 * The public description documents by operation id, each generated from the operation definitions and
 * catalogues (pure metadata). The local server serves them as generated; the CDK build generates them once
 * per deploy (interface: `/webhook-events.json` is "regenerated on every deploy") and ships them
 * compressed in their routes' bundles, so those Lambdas carry neither the schemas nor the generators.
 */
export const PUBLIC_DOCUMENTS = {
  getOpenApiDocument: () => openApiDocument(),
  getWebhookEventsDocument: () => webhookEventsDocument(),
} as const;
