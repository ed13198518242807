/**
 * The one place every AWS SDK client of the service passes through when an adapter creates it
 * (`awsClient(new SQSClient({}))`), so a function's entry can instrument them all — X-Ray subsegments
 * through Powertools Tracer (`shared/aws/tracing.ts`, DESIGN D23) — without the adapters knowing. By
 * default clients are returned as they are: local runs, tests and the functions that bundle no tracer
 * are unaffected.
 */

/** Instruments an AWS SDK v3 client in place and returns it. */
export type ClientCapture = <Client extends object>(client: Client) => Client;

const asIs: ClientCapture = (client) => client;
let capture: ClientCapture = asIs;

/**
 * Makes {@link awsClient} instrument every client created from now on with `instrument` (a function's
 * entry calls it once, at module load, before its runtime creates any client). `undefined` restores the
 * default (clients as they are).
 */
export function captureAwsClients(instrument: ClientCapture | undefined): void {
  capture = instrument ?? asIs;
}

/** `client`, instrumented by the capture the function's entry chose ({@link captureAwsClients}), if any. */
export function awsClient<Client extends object>(client: Client): Client {
  return capture(client);
}
