import { isJobMessage, type PipelineMessage, type Runtime } from '../runtime.js';
import { processJobMessage, type JobOutcome } from './job-worker.js';
import { processDeliveryMessage, type ProcessOutcome } from './webhook-deliveries/dispatcher.js';

/**
 * Handles a message of either queue (DESIGN D7): a job message as the job worker does, any other as the dispatcher
 * does. For the local server's single in-process queue and for tests; on AWS each queue has its own function, so
 * neither bundle holds the other's code.
 */
export async function processPipelineMessage(
  runtime: Runtime,
  message: PipelineMessage,
): Promise<ProcessOutcome | JobOutcome> {
  return isJobMessage(message) ? processJobMessage(runtime, message) : processDeliveryMessage(runtime, message);
}
