/** Dispatcher Lambda: SQS delivery messages → signed HTTPS POSTs (partial batch failures). */
import { awsDispatcherRuntime } from '../shared/aws/dispatcher-runtime.js';
import { createDispatcherHandler } from '../shared/aws/pipeline-handlers.js';

export const handler = createDispatcherHandler(awsDispatcherRuntime);
