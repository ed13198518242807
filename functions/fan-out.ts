/** Fan-out Lambda: DynamoDB stream of outbox events → one delivery per subscribed endpoint. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createFanOutHandler } from '../shared/aws/pipeline-handlers.js';
import { traced } from '../shared/aws/tracing.js';

/** The fan-out Lambda's handler: batches of the main table's DynamoDB stream (inserted event items only). */
export const handler = traced(createFanOutHandler(awsRuntime));
