/**
 * Benchmark 1: DynamoDB requests per call and latency of the REST smoke test (`GET /v1/teams/current`),
 * a REST write (`POST /v1/projects` with a fresh `Idempotency-Key`) and an MCP `tools/call` of
 * `list_projects`, each over sequential calls against the in-process local service (DESIGN §5, D4, D5).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { LocalService } from '../shared/local/service.js';
import { RATE_LIMITS } from '../shared/limits/rate-limit.js';
import { callsMade, measureCalls, outcomeOf, type CallScenarioResult } from './measure-calls.js';
import type { RequestCounter } from './support.js';
import { mintTokens, tokensNeeded } from './tokens.js';

/** The MCP protocol version the bench speaks with a session (DESIGN D5: checked as the spec requires). */
export const MCP_PROTOCOL_VERSION = '2025-06-18';
/** The stateless MCP revision the bench also measures: no `initialize`, no session, the envelope in `_meta`. */
const MCP_MODERN_VERSION = '2026-07-28';

/** A JSON-RPC POST to the tool server with the headers the streamable HTTP transport requires. */
async function mcpPost(
  service: LocalService,
  token: string,
  sessionId: string | null,
  message: unknown,
  extraHeaders: Record<string, string> = {},
): Promise<Response> {
  const headers: Record<string, string> = {
    Authorization: `Bearer ${token}`,
    Accept: 'application/json, text/event-stream',
    'Content-Type': 'application/json',
    'MCP-Protocol-Version': MCP_PROTOCOL_VERSION,
    ...extraHeaders,
  };
  if (sessionId) headers['MCP-Session-Id'] = sessionId;
  return fetch(service.mcpUrl, { method: 'POST', headers, body: JSON.stringify(message) });
}

/**
 * Opens an MCP session for `token`: `initialize` (reads `MCP-Session-Id`), then the
 * `notifications/initialized` notification. Throws when the server refuses.
 */
async function openMcpSession(service: LocalService, token: string): Promise<string> {
  const response = await mcpPost(service, token, null, {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: MCP_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'membership-bench', version: '1.0.0' },
    },
  });
  const body = await response.text();
  const sessionId = response.headers.get('mcp-session-id');
  if (response.status !== 200 || !sessionId)
    throw new Error(`MCP initialize failed: HTTP ${response.status} ${body.slice(0, 300)}`);
  const initialized = await mcpPost(service, token, sessionId, { jsonrpc: '2.0', method: 'notifications/initialized' });
  await initialized.text();
  if (initialized.status !== 202 && initialized.status !== 200)
    throw new Error(`MCP notifications/initialized failed: HTTP ${initialized.status}`);
  return sessionId;
}

/** Options of {@link runRequestBenchmarks}. */
export interface RequestBenchmarkOptions {
  service: LocalService;
  counter: RequestCounter;
  /** The local pipeline, held during each call and run between calls (on AWS the fan-out is another Lambda). */
  pipeline: { hold(): void; release(): Promise<void> };
  warmup: number;
  calls: number;
  /** Prints a progress line (stderr). */
  progress: (line: string) => void;
}

/**
 * Runs the three call scenarios against the demo team of `service`. Tokens (every ability) are minted
 * first, enough per scenario to stay under the per-token rate limits (D4: REST 600/min, MCP 120/min),
 * and calls rotate among them; MCP sessions are opened per token before measuring.
 */
export async function runRequestBenchmarks(options: RequestBenchmarkOptions): Promise<CallScenarioResult[]> {
  const { service, counter, pipeline } = options;
  const total = callsMade(options.warmup, options.calls);
  const teamId = service.demoTeamId;
  const results: CallScenarioResult[] = [];
  const afterCall = async () => {
    await pipeline.release();
    pipeline.hold();
  };
  pipeline.hold();
  try {
    // GET /v1/teams/current — the smoke test.
    {
      const tokens = await mintTokens(
        service.store,
        teamId,
        tokensNeeded(total, RATE_LIMITS.rest.limit),
        'bench smoke',
      );
      options.progress(
        `GET /v1/teams/current: ${tokens.length} tokens, ${options.warmup} warm-up + ${options.calls} calls`,
      );
      results.push(
        await measureCalls({
          name: 'GET /v1/teams/current',
          warmup: options.warmup,
          calls: options.calls,
          tokens: tokens.length,
          counter,
          afterCall,
          store: service.store,
          // The token (with the IP's counter) in one BatchGetItem, the `rest` counter, the team item (D19:
          // the smoke test reads the team, so a rename shows at once).
          aimMaxRequests: 3,
          call: async (index) => {
            const token = tokens[(index + tokens.length * total) % tokens.length].token;
            const response = await fetch(`${service.baseUrl}/v1/teams/current`, {
              headers: { Authorization: `Bearer ${token}` },
            });
            return outcomeOf(response, 200);
          },
        }),
      );
    }

    // POST /v1/projects — a write with a fresh Idempotency-Key each time.
    {
      const tokens = await mintTokens(
        service.store,
        teamId,
        tokensNeeded(total, RATE_LIMITS.rest.limit),
        'bench projects',
      );
      options.progress(
        `POST /v1/projects: ${tokens.length} tokens, ${options.warmup} warm-up + ${options.calls} calls`,
      );
      results.push(
        await measureCalls({
          name: 'POST /v1/projects',
          warmup: options.warmup,
          calls: options.calls,
          tokens: tokens.length,
          counter,
          afterCall,
          store: service.store,
          call: async (index) => {
            const token = tokens[(index + tokens.length * total) % tokens.length].token;
            const response = await fetch(`${service.baseUrl}/v1/projects`, {
              method: 'POST',
              headers: {
                Authorization: `Bearer ${token}`,
                'Content-Type': 'application/json',
                'Idempotency-Key': randomUUID(),
              },
              body: JSON.stringify({ name: `Bench project ${index}`, platform_type: 'discord' }),
            });
            return outcomeOf(response, 201);
          },
        }),
      );
    }

    // MCP tools/call list_projects: with a session per token (2025-06-18; sessions are bound to their token), and
    // stateless (2026-07-28: no initialize, no session).
    for (const modern of [false, true]) {
      // Each token also spends two requests on initialize + notifications/initialized.
      const count = tokensNeeded(total + (modern ? 0 : 2 * 20), RATE_LIMITS.mcp.limit);
      const tokens = await mintTokens(service.store, teamId, count, 'bench mcp');
      const sessions: Array<string | null> = [];
      for (const token of tokens) sessions.push(modern ? null : await openMcpSession(service, token.token));
      const name = `MCP tools/call list_projects ${modern ? MCP_MODERN_VERSION : MCP_PROTOCOL_VERSION}`;
      options.progress(`${name}: ${tokens.length} tokens, ${options.warmup} warm-up + ${options.calls} calls`);
      let rpcId = 1;
      const params = { name: 'list_projects', arguments: { limit: 25 } };
      const envelope = {
        'io.modelcontextprotocol/protocolVersion': MCP_MODERN_VERSION,
        'io.modelcontextprotocol/clientInfo': { name: 'membership-bench', version: '1.0.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      };
      const modernHeaders = {
        'MCP-Protocol-Version': MCP_MODERN_VERSION,
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'list_projects',
      };
      results.push(
        await measureCalls({
          name,
          warmup: options.warmup,
          calls: options.calls,
          tokens: tokens.length,
          counter,
          afterCall,
          store: service.store,
          aimMaxRequests: 4,
          call: async (index) => {
            const slot = (index + tokens.length * total) % tokens.length;
            const response = await mcpPost(
              service,
              tokens[slot].token,
              sessions[slot],
              {
                jsonrpc: '2.0',
                id: rpcId++,
                method: 'tools/call',
                params: modern ? { ...params, _meta: envelope } : params,
              },
              modern ? modernHeaders : {},
            );
            const text = await response.text();
            if (response.status !== 200) return { ok: false, status: response.status, detail: text.slice(0, 200) };
            let message: { result?: { isError?: boolean; structuredContent?: { data?: unknown[] } }; error?: unknown };
            try {
              message = JSON.parse(text) as typeof message;
            } catch {
              return { ok: false, status: response.status, detail: `not JSON: ${text.slice(0, 120)}` };
            }
            if (
              message.error ||
              !message.result ||
              message.result.isError ||
              !Array.isArray(message.result.structuredContent?.data)
            ) {
              return { ok: false, status: response.status, detail: text.slice(0, 200) };
            }
            return { ok: true, status: response.status };
          },
        }),
      );
    }
    return results;
  } finally {
    await pipeline.release();
  }
}
