import { SQSClient } from '@aws-sdk/client-sqs';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { systemClock } from '../clock.js';
import type { Runtime } from '../runtime.js';
import { storeFromEnvironment } from '../store/store.js';
import { createHttpsTransport } from '../webhooks/transport.js';
import { createSchedulerRetryScheduler, createSqsDeliveryQueue } from './adapters.js';

let runtime: Runtime | undefined;

/**
 * The runtime of every Lambda (built once per execution environment from its environment variables):
 * TABLE_NAME, DEAD_LETTER_TABLE_NAME, DELIVERY_QUEUE_URL, DELIVERY_QUEUE_ARN, SCHEDULER_GROUP_NAME,
 * SCHEDULER_ROLE_ARN. Fan-out runs from DynamoDB Streams, so `eventsCommitted` does nothing; time is
 * never scaled; webhook targets must be public HTTPS hosts trusted by the system roots (DESIGN D9).
 */
export function awsRuntime(): Runtime {
  if (runtime) return runtime;
  const env = process.env;
  runtime = {
    store: storeFromEnvironment(env),
    clock: systemClock,
    deliveryQueue: createSqsDeliveryQueue(new SQSClient({}), env.DELIVERY_QUEUE_URL ?? ''),
    retryScheduler: createSchedulerRetryScheduler(new SchedulerClient({}), {
      groupName: env.SCHEDULER_GROUP_NAME ?? '',
      queueArn: env.DELIVERY_QUEUE_ARN ?? '',
      roleArn: env.SCHEDULER_ROLE_ARN ?? '',
    }),
    transport: createHttpsTransport({ allowPrivateTargets: false }),
    eventsCommitted: () => undefined,
    timeScale: 1,
  };
  return runtime;
}
