import type { ServerResponse } from 'node:http';
import { ProblemError } from '../errors.js';
import { responseToResult, writeResult, type ApiGatewayResult } from '../http/api-gateway.js';
import { problemResult } from '../http/rest-pipeline.js';
import { MCP_CORS_HEADERS, mcpPayloadTooLargeResponse } from '../mcp/responses.js';
import { hostnameOf } from './hosts.js';

/** The local server's answers given before a request reaches a surface (DESIGN D5): foreign hosts, bodies too large. */

/** Writes an answer given before the request's body was read, and closes the connection so it never is. */
export function answerEarly(response: ServerResponse, result: ApiGatewayResult): void {
  result.headers.Connection = 'close';
  writeResult(response, result);
}

/**
 * The local server's answer to a request whose `Host` names none of the served names (DNS-rebinding
 * protection, DESIGN D5): on the tool server's paths 403 with JSON-RPC error -32000 "Invalid Host" and the
 * interface's CORS headers, as the MCP SDK's host validation answers; elsewhere 422 VALIDATION_FAILED
 * naming `header.host`.
 */
export async function foreignHostResult(
  isMcp: boolean,
  hostHeader: string | undefined,
  requestId: string,
): Promise<ApiGatewayResult> {
  const shown = (hostnameOf(hostHeader) ?? hostHeader ?? '(none)').slice(0, 100);
  if (isMcp) {
    const body = JSON.stringify({
      jsonrpc: '2.0',
      error: { code: -32000, message: `Invalid Host: ${shown}` },
      id: null,
    });
    return responseToResult(
      new Response(body, {
        status: 403,
        headers: { ...MCP_CORS_HEADERS, 'Content-Type': 'application/json', 'X-Request-Id': requestId },
      }),
    );
  }
  const result = problemResult(
    new ProblemError('VALIDATION_FAILED', `This server does not serve the host ${shown}.`, {
      errors: [
        { path: 'header.host', message: 'Use the address the server printed at start (e.g. 127.0.0.1 or localhost).' },
      ],
    }),
    requestId,
  );
  result.headers['X-Request-Id'] = requestId;
  return result;
}

/**
 * The 413 of a body over its surface's limit, in that surface's format (PAYLOAD_TOO_LARGE problem, or the tool server's
 * JSON-RPC error).
 */
export async function tooLargeResult(isMcp: boolean, limit: number, requestId: string): Promise<ApiGatewayResult> {
  if (isMcp) return responseToResult(mcpPayloadTooLargeResponse(requestId));
  const result = problemResult(
    new ProblemError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`),
    requestId,
  );
  result.headers['X-Request-Id'] = requestId;
  return result;
}
