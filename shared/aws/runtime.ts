import { SQSClient } from '@aws-sdk/client-sqs';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { systemClock } from '../clock.js';
import { lambdaConfig, schedulerConfig } from '../config.js';
import type { RetryScheduler, Runtime } from '../runtime.js';
import type { WebhookTransport } from '../domain/webhook-deliveries/transport/port.js';
import { createStore, dynamoDbClient } from '../store/store.js';
import { awsClient } from './clients.js';
import { createSchedulerRetryScheduler, createSqsDeliveryQueue } from './adapters.js';

let runtime: Runtime | undefined;

/**
 * The transport of the functions that send no webhooks (every function but the dispatcher, whose entry
 * gives its own: `shared/aws/dispatcher-runtime.ts`), so their bundles do not carry the HTTPS client.
 */
const NO_TRANSPORT: WebhookTransport = {
  send: () => {
    throw new Error('This function sends no webhooks; only the dispatcher has an outbound transport.');
  },
};

/**
 * Every Lambda's runtime, built once from `shared/config.ts` (throws `ConfigurationError` naming a missing setting):
 * store, SQS, lazy Scheduler. `eventsCommitted` does nothing (Streams fan out); time unscaled; webhook targets public
 * HTTPS, system roots (D9); clients via `awsClient` (X-Ray, D23).
 */
export function awsRuntime(): Runtime {
  return (runtime ??= createAwsRuntime(NO_TRANSPORT));
}

/** Builds an AWS runtime with `transport` (see {@link awsRuntime}). Throws `ConfigurationError`. */
export function createAwsRuntime(transport: WebhookTransport): Runtime {
  const config = lambdaConfig();
  let scheduler: RetryScheduler | undefined;
  return {
    store: createStore({
      client: awsClient(dynamoDbClient(config.dynamoDbEndpoint)),
      tableName: config.tableName,
      deadLetterTableName: config.deadLetterTableName,
    }),
    clock: systemClock,
    deliveryQueue: createSqsDeliveryQueue(awsClient(new SQSClient({})), {
      deliveries: config.deliveryQueueUrl,
      jobs: config.jobQueueUrl,
    }),
    retryScheduler: {
      schedule: (message, atMs) => {
        scheduler ??= createSchedulerRetryScheduler(awsClient(new SchedulerClient({})), schedulerConfig());
        return scheduler.schedule(message, atMs);
      },
    },
    transport,
    eventsCommitted: () => undefined,
    timeScale: 1,
    // No `integrations`: the integrations read theirs from the environment on first use
    // (`integrationsOf`), so a function that never touches one needs none of its settings.
  };
}
