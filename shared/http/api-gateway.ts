import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';

/** An API Gateway HTTP API (payload v2) result with its fields filled in. */
export type ApiGatewayResult = APIGatewayProxyStructuredResultV2 & {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
};

/**
 * API Gateway's own cap on a request body (10 MB, HTTP API quotas): larger requests never reach a
 * Lambda. The local server stops reading well before it, at each surface's own limit (DESIGN D5).
 */
export const API_GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

/**
 * Turns an API Gateway HTTP API v2 event into a web `Request` (for the MCP SDK's web-standard
 * transport). The URL's scheme is `X-Forwarded-Proto` when it is `http` or `https` (API Gateway sends
 * `https`; the local server sets `http`), else `https`. Cookies (`event.cookies`) are dropped: the tool
 * server never accepts them (interface "Tool-server authorization" 4). Throws a `TypeError` when the
 * `Host` makes no valid URL.
 */
export function eventToRequest(event: APIGatewayProxyEventV2): Request {
  const host = event.headers.host ?? event.requestContext.domainName ?? 'localhost';
  const forwardedProto = event.headers['x-forwarded-proto']?.split(',')[0]?.trim().toLowerCase();
  const scheme = forwardedProto === 'http' ? 'http' : 'https';
  const url = `${scheme}://${host}${event.rawPath}${event.rawQueryString ? `?${event.rawQueryString}` : ''}`;
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers))
    if (value !== undefined && name !== 'cookie') headers.set(name, value);
  const method = event.requestContext.http.method.toUpperCase();
  const body =
    event.body && method !== 'GET' && method !== 'HEAD'
      ? Buffer.from(event.body, event.isBase64Encoded ? 'base64' : 'utf8')
      : undefined;
  return new Request(url, { method, headers, body });
}

/** Turns a web `Response` into an API Gateway v2 result (body as UTF-8 text). */
export async function responseToResult(response: Response): Promise<ApiGatewayResult> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  return { statusCode: response.status, headers, body: await response.text() };
}

/**
 * Local server only: builds the API Gateway HTTP API v2 event API Gateway would send for a Node
 * request (lower-cased headers with repeated values joined by commas, cookies split out, query
 * parameters decoded, body base64-encoded, `x-forwarded-proto: http` since the local server speaks plain
 * HTTP — whatever the client sent). `sourceIp` is the socket's remote address. `body` is what the caller
 * read, already bounded by the surface's limit.
 */
export function nodeRequestToEvent(request: IncomingMessage, body: Buffer): APIGatewayProxyEventV2 {
  const url = new URL(request.url ?? '/', 'http://local');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || name === 'cookie') continue;
    headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  headers['x-forwarded-proto'] = 'http';
  const queryStringParameters: Record<string, string> = {};
  for (const [name, value] of url.searchParams)
    queryStringParameters[name] = name in queryStringParameters ? `${queryStringParameters[name]},${value}` : value;
  const method = (request.method ?? 'GET').toUpperCase();
  const requestId = randomUUID();
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    cookies: request.headers.cookie ? request.headers.cookie.split(/;\s*/) : undefined,
    headers,
    queryStringParameters: Object.keys(queryStringParameters).length ? queryStringParameters : undefined,
    requestContext: {
      accountId: 'local',
      apiId: 'local',
      domainName: headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body: body.byteLength ? body.toString('base64') : undefined,
    isBase64Encoded: body.byteLength > 0,
  };
}

/**
 * Local server only: writes an API Gateway v2 result to a Node response (`cookies` become `Set-Cookie` headers, as API
 * Gateway does).
 */
export function writeResult(response: ServerResponse, result: ApiGatewayResult): void {
  if (result.cookies?.length) response.setHeader('Set-Cookie', result.cookies);
  response.writeHead(result.statusCode, result.headers);
  response.end(result.body ?? '');
}
