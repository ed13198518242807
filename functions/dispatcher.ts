/** Dispatcher Lambda: SQS delivery messages → signed HTTPS POSTs (partial batch failures). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createDispatcherHandler } from '../shared/aws/pipeline-handlers.js';

export const handler = createDispatcherHandler(awsRuntime);
