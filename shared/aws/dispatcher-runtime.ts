import { createHttpsTransport } from '../domain/webhook-deliveries/transport/https-transport.js';
import type { Runtime } from '../runtime.js';
import { powertoolsDeliveryMetrics, serviceMetrics } from './metrics.js';
import { createAwsRuntime } from './runtime.js';

let runtime: Runtime | undefined;

/**
 * The dispatcher's Powertools Metrics (DESIGN D23): its runtime reports delivery attempts and dead
 * deliveries into it; `functions/dispatcher.ts` flushes it after each invocation (`publishingMetrics`).
 */
export const dispatcherMetrics = serviceMetrics();

/**
 * The dispatcher Lambda's runtime: the AWS runtime plus the outbound HTTPS transport (public targets
 * only, system roots, DESIGN D9) and the delivery metrics ({@link dispatcherMetrics}). Only the
 * dispatcher sends webhooks, so only its bundle holds the client.
 */
export function awsDispatcherRuntime(): Runtime {
  return (runtime ??= {
    ...createAwsRuntime(createHttpsTransport({ allowPrivateTargets: false })),
    metrics: powertoolsDeliveryMetrics(dispatcherMetrics),
  });
}
