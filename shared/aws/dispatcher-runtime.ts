import { createHttpsTransport } from '../domain/webhook-deliveries/transport/https-transport.js';
import type { Runtime } from '../runtime.js';
import { createAwsRuntime } from './runtime.js';

let runtime: Runtime | undefined;

/**
 * The dispatcher Lambda's runtime: the AWS runtime plus the outbound HTTPS transport (public targets
 * only, system roots, DESIGN D9). Only the dispatcher sends webhooks, so only its bundle holds the client.
 */
export function awsDispatcherRuntime(): Runtime {
  return (runtime ??= createAwsRuntime(createHttpsTransport({ allowPrivateTargets: false })));
}
