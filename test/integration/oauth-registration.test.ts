/**
 * RFC 7591 registration (`POST /oauth/register`, DESIGN D30) against malformed metadata: every body that is not
 * acceptable client metadata answers 400 `invalid_client_metadata` (never a 500), unknown fields are dropped, and a
 * client name is text like every other name. The token endpoint answers an oversized parameter as RFC 6749 says.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { handleToolServerApiRequest } from '../../shared/local/tool-server-api.js';
import { createTestRuntime, testClock, type TestRuntime } from '../support/store.js';

const REDIRECT = 'http://127.0.0.1:3453/callback';
let runtime: TestRuntime;
let nextIp = 0;

beforeAll(async () => {
  runtime = await createTestRuntime({ clock: testClock({ secondsIntoMinute: 1 }) });
});

/** `POST /oauth/register` with `body` as it is sent, from an IP of its own (the per-IP limit stays out of the way). */
async function register(body: string): Promise<Response> {
  const request = new Request('https://mcp.test/oauth/register', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body,
  });
  return handleToolServerApiRequest(runtime, request, { clientIp: `203.0.113.${++nextIp}` });
}

/** Nests `{ "a": … }` `depth` levels deep around 1. */
const nested = (depth: number): string => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('POST /oauth/register with malformed metadata', () => {
  it.each([
    ['an empty JWKS key', `{"client_name":"e","jwks":{"":1},"redirect_uris":["${REDIRECT}"]}`],
    ['a number beyond a double', `{"client_name":"e","jwks":{"keys":[1e999]},"redirect_uris":["${REDIRECT}"]}`],
    ['nesting 33 levels deep', `{"client_name":"e","extra":${nested(33)},"redirect_uris":["${REDIRECT}"]}`],
  ])('drops unknown fields holding %s and registers the client', async (_case, body) => {
    const response = await register(body);
    expect(response.status).toBe(201);
    const client = await response.json();
    expect(client).toMatchObject({ client_name: 'e', redirect_uris: [REDIRECT] });
    expect(client).not.toHaveProperty('jwks');
    expect(client).not.toHaveProperty('extra');
  });

  it.each([
    ['metadata over 400 KB', JSON.stringify({ client_name: 'e', redirect_uris: [REDIRECT], x: 'y'.repeat(400_000) })],
    ['a control character in the name', JSON.stringify({ client_name: 'a\u0000b', redirect_uris: [REDIRECT] })],
    ['a lone surrogate in the name', `{"client_name":"a\\ud800b","redirect_uris":["${REDIRECT}"]}`],
    ['a redirect URI that is not a string', `{"client_name":"e","redirect_uris":[{"":1}]}`],
    ['a client URI over 2,048 characters', JSON.stringify({ redirect_uris: [REDIRECT], client_uri: 'x'.repeat(3000) })],
    ['a body that is not JSON', '{"client_name":'],
  ])('answers 400 invalid_client_metadata to %s', async (_case, body) => {
    const response = await register(body);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_client_metadata' });
  });
});

describe('POST /oauth/token with an oversized parameter', () => {
  it('answers 400 invalid_request (RFC 6749 §5.2), as every other malformed token request', async () => {
    const client = await (await register(JSON.stringify({ client_name: 'e', redirect_uris: [REDIRECT] }))).json();
    const response = await handleToolServerApiRequest(
      runtime,
      new Request('https://mcp.test/oauth/token', {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: client.client_id,
          code: 'c'.repeat(3000),
          redirect_uri: REDIRECT,
          code_verifier: 'v'.repeat(43),
        }).toString(),
      }),
      { clientIp: `203.0.113.${++nextIp}` },
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: 'invalid_request' });
  });
});
