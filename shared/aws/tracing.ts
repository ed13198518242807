import { Tracer } from '@aws-lambda-powertools/tracer';
import type { Context } from 'aws-lambda';
import { captureAwsClients } from './clients.js';

/**
 * X-Ray tracing through Powertools Tracer (DESIGN D23). The stack turns on active tracing for every
 * function, so Lambda records each invocation; the functions whose entry wraps its handler with
 * {@link traced} (MCP, dashboard, the webhook workers, the deadline worker) also record a subsegment per
 * AWS SDK call (DynamoDB, SQS, EventBridge Scheduler, KMS). REST route and hook bundles leave Tracer out:
 * it adds ~124 KB, past their 260 KB budget (`test/infrastructure/stack.test.ts`).
 *
 * Tracer disables itself outside Lambda (no `AWS_LAMBDA_FUNCTION_NAME`) and with
 * `POWERTOOLS_TRACE_ENABLED=false`; then clients are left as they are and the handler runs unwrapped.
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
export function traced<Event, Result>(handler: (event: Event, context: Context) => Promise<Result>): (event: Event, context: Context) => Promise<Result> {
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
