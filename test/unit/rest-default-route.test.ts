/**
 * The `$default` route's Lambda (OPERATION_ID `$default`, see lib/rest-api.ts) answers every unmatched
 * request with a problem document before authentication, and never serves an operation.
 */
import { describe, expect, it } from 'vitest';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { handleRestRequest } from '../../shared/http/rest-handler.js';
import type { Runtime } from '../../shared/runtime.js';

const untouchable = new Proxy(
  {},
  {
    get: () => {
      throw new Error('the $default route must not touch the runtime');
    },
  },
) as Runtime;

function event(method: string, path: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {},
    isBase64Encoded: false,
    requestContext: {
      http: { method, path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'test' },
      requestId: 'req-1',
    },
  } as unknown as APIGatewayProxyEventV2;
}

describe('REST $default route', () => {
  it('answers NOT_FOUND problem JSON for an unknown path', async () => {
    const result = await handleRestRequest(untouchable, event('GET', '/v1/nothing-here'), { operationId: '$default' });
    expect(result.statusCode).toBe(404);
    expect(result.headers['Content-Type']).toBe('application/problem+json');
    expect(JSON.parse(result.body)).toMatchObject({ code: 'NOT_FOUND', status: 404, request_id: 'req-1' });
  });

  it('answers METHOD_NOT_ALLOWED with Allow for a known path and another method', async () => {
    const result = await handleRestRequest(untouchable, event('PUT', '/v1/projects'), { operationId: '$default' });
    expect(result.statusCode).toBe(405);
    expect(result.headers.Allow).toBe('POST, GET');
    expect(JSON.parse(result.body).code).toBe('METHOD_NOT_ALLOWED');
  });

  it('never serves a real operation, even if a matching request reached it', async () => {
    const result = await handleRestRequest(untouchable, event('GET', '/openapi.json'), { operationId: '$default' });
    expect(result.statusCode).toBe(404);
  });
});
