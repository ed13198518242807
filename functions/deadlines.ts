/** Deadline worker Lambda (every minute, EventBridge Scheduler): applies due deadlines (DESIGN D15). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createDeadlineWorkerHandler } from '../shared/aws/deadline-worker.js';
import { traced } from '../shared/aws/tracing.js';

/** The deadline worker Lambda's handler: invoked every minute by an EventBridge Scheduler schedule. */
export const handler = traced(createDeadlineWorkerHandler(awsRuntime));
