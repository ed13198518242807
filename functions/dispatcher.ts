/**
 * Dispatcher Lambda: SQS delivery messages → signed HTTPS POSTs (partial batch failures); traced, delivery metrics
 * flushed per invocation.
 */
import { awsDispatcherRuntime, dispatcherMetrics } from '../shared/aws/dispatcher-runtime.js';
import { publishingMetrics } from '../shared/aws/metrics.js';
import { createDispatcherHandler } from '../shared/aws/pipeline-handlers.js';
import { traced } from '../shared/aws/tracing.js';

/** The dispatcher Lambda's handler: SQS batches of the delivery queue, answering the failed messages. */
export const handler = traced(publishingMetrics(dispatcherMetrics, createDispatcherHandler(awsDispatcherRuntime)));
