/**
 * Job worker Lambda: SQS job messages → messages to subscribers, broadcast batches, import and audit pages, access-code
 * batches (partial batch failures); traced.
 */
import { createJobWorkerHandler } from '../shared/aws/pipeline-handlers.js';
import { awsRuntime } from '../shared/aws/runtime.js';
import { traced } from '../shared/aws/tracing.js';

/** The job worker Lambda's handler: SQS batches of the jobs queue, answering the failed messages. */
export const handler = traced(createJobWorkerHandler(awsRuntime));
