/**
 * X-Ray wiring of the Lambda entries (DESIGN D23): every AWS SDK client an adapter creates passes
 * through `awsClient`, which a traced entry points at Powertools Tracer. Outside Lambda (tests, local
 * runs) Tracer disables itself, so clients and handlers behave exactly as without it.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import { createRequire } from 'node:module';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { awsClient, captureAwsClients } from '../../shared/aws/clients.js';
import { serviceTracer, traced } from '../../shared/aws/tracing.js';

afterEach(() => {
  captureAwsClients(undefined);
  vi.unstubAllEnvs();
});

describe('awsClient', () => {
  it('returns the client as it is by default', () => {
    const client = new SQSClient({ region: 'eu-west-1' });
    expect(awsClient(client)).toBe(client);
  });

  it('passes every client through the capture a function entry chose, until it is reset', () => {
    const seen: object[] = [];
    captureAwsClients((client) => {
      seen.push(client);
      return client;
    });
    const client = new SQSClient({ region: 'eu-west-1' });
    expect(awsClient(client)).toBe(client);
    expect(seen).toEqual([client]);
    captureAwsClients(undefined);
    awsClient(new SQSClient({ region: 'eu-west-1' }));
    expect(seen).toHaveLength(1);
  });
});

describe('traced (outside Lambda)', () => {
  it('leaves tracing off, clients untouched, and results and errors as the handler gives them', async () => {
    const handler = traced(async (event: { fail: boolean }) => {
      if (event.fail) throw new Error('handler failed');
      return { statusCode: 204 };
    });
    expect(serviceTracer().isTracingEnabled()).toBe(false);
    const client = new SQSClient({ region: 'eu-west-1' });
    expect(awsClient(client)).toBe(client);
    expect(client.middlewareStack.identify().some((name) => /xray/i.test(name))).toBe(false);
    await expect(handler({ fail: false }, {} as never)).resolves.toEqual({ statusCode: 204 });
    await expect(handler({ fail: true }, {} as never)).rejects.toThrow('handler failed');
  });
});

describe('serviceTracer (in a Lambda environment)', () => {
  it('traces, but never captures outgoing HTTP(S) requests: their URLs may hold secrets (a Telegram bot token)', async () => {
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'membership-test');
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs24.x');
    vi.stubEnv('_X_AMZN_TRACE_ID', 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1');
    const https = createRequire(import.meta.url)('node:https') as typeof import('node:https');
    const request = https.request;
    // A second instance of the module (its own URL), so a tracer created under these settings, not the one above.
    const fresh = new URL('../../shared/aws/tracing.ts?in-lambda', import.meta.url).href;
    const { serviceTracer: freshTracer } = (await import(fresh)) as typeof import('../../shared/aws/tracing.js');
    expect(freshTracer().isTracingEnabled()).toBe(true);
    expect(https.request).toBe(request);
    expect(diagnosticsChannel.hasSubscribers('undici:request:create')).toBe(false);
  });
});
