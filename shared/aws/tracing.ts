import { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import { captureAwsClients } from './clients.js';

/**
 * X-Ray via Powertools Tracer (D23): entries wrapped with {@link traced} (MCP, dashboard, webhook and deadline workers)
 * trace each AWS SDK call; REST and hook bundles leave it out (~124 KB, past their 250 KB budget). Outside Lambda or
 * with `POWERTOOLS_TRACE_ENABLED=false` everything runs unwrapped.
 */

let tracer: Tracer | undefined;

/**
 * The function's tracer, created on first use (service name `POWERTOOLS_SERVICE_NAME`, which the stack
 * sets). Outgoing HTTP(S) requests are NOT captured (`captureHTTPsRequests: false`): their URLs would
 * land in X-Ray, and a Telegram Bot API URL holds the bot token (`/bot<token>/...`) while webhook target
 * URLs are customers' — secrets never leave in traces. AWS SDK calls are captured per client instead.
 */
export function serviceTracer(): Tracer {
  return (tracer ??= new Tracer({ captureHTTPsRequests: false }));
}

/**
 * Wraps a Lambda handler with tracing: from now on every AWS SDK client an adapter creates
 * (`awsClient`, `shared/aws/clients.ts`) is captured by {@link serviceTracer} (lazily: the tracer is
 * created with the first client, inside the first invocation), and each invocation runs in a
 * `## <handler>` subsegment annotated with cold start and service name, holding the error if it throws.
 * Results and errors pass through unchanged; the event is never recorded (it may hold secrets).
 */
export function traced<Event, Result>(
  handler: (event: Event, context: Context) => Promise<Result>,
): (event: Event, context: Context) => Promise<Result> {
  captureAwsClients((client) => serviceTracer().captureAWSv3Client(client));
  return async (event, context) => {
    const active = serviceTracer();
    if (!active.isTracingEnabled()) return handler(event, context);
    const parent = active.getSegment();
    const subsegment = parent?.addNewSubsegment(`## ${process.env._HANDLER ?? 'handler'}`);
    if (subsegment) active.setSegment(subsegment);
    active.annotateColdStart();
    active.addServiceNameAnnotation();
    try {
      return await handler(event, context);
    } catch (error) {
      active.addErrorAsMetadata(error as Error);
      throw error;
    } finally {
      subsegment?.close();
      if (parent) active.setSegment(parent);
    }
  };
}
