/** Sweeper Lambda (every 5 minutes): re-queues deliveries whose timer was lost. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createSweeperHandler } from '../shared/aws/pipeline-handlers.js';
import { traced } from '../shared/aws/tracing.js';

/** The sweeper Lambda's handler: invoked every 5 minutes by an EventBridge rule. */
export const handler = traced(createSweeperHandler(awsRuntime));
