import {
  createMcpHandler,
  ProtocolErrorCode,
  Server,
  specTypeSchemas,
  type CacheHint,
  type StandardSchemaV1Sync,
  type Transport,
} from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.js';
import { enumResource, ENUM_RESOURCES } from '../catalogues/resources.js';
import { API_VERSION } from '../catalogues/version.js';
import type { Runtime } from '../runtime.js';
import { toolDefinition } from '../catalogues/tools.js';
import { confirmationGate, takesConfirmation } from './confirmation.js';
import { teamConfirmationKey } from './confirmation-key.js';
import { SERVER_ICON } from './icons.js';
import { toolListingOf } from './request-checks.js';
import { withToolScopeChallenge } from './scope-challenge.js';
import { declaresTasks, serveTasks, taskHandleOf, taskStartOf } from './tasks.js';
import { callTool, canCall, FULL_LISTING, listToolsResult, type ToolListing } from './tools.js';
import { JSON_SCHEMA_VALIDATOR } from './sdk-shims.js';

/** JSON-RPC error code for an unknown resource URI (MCP "Resources → Error handling"). */
const RESOURCE_NOT_FOUND = -32002;

/** How long a 2026-07-28 client may reuse a list, a resource or `server/discover` (ms): they change only on deploy. */
const MCP_CACHE_TTL_MS = 5 * 60 * 1000;

/**
 * A JSON-RPC error for the SDK to answer with: `code` and `message` exactly (the SDK's `ProtocolError`
 * would prefix the message with "MCP error <code>: ").
 */
function protocolError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * The 2026-07-28 cache hints (`ttlMs`, `cacheScope`) of one request's server: every result is the same for every
 * caller (`public`) except a `tools/list` narrowed by an opt-in, which depends on the token or on headers outside the
 * cache key (`private`).
 */
function cacheHintsOf(listing: ToolListing): Record<string, CacheHint> {
  const shared: CacheHint = { ttlMs: MCP_CACHE_TTL_MS, cacheScope: 'public' };
  const narrowed = listing.callableOnly || listing.readOnly;
  return {
    'server/discover': shared,
    'tools/list': narrowed ? { ttlMs: MCP_CACHE_TTL_MS, cacheScope: 'private' } : shared,
    'resources/list': shared,
    'resources/templates/list': shared,
    'resources/read': shared,
  };
}

/**
 * Builds the MCP SDK `Server` for one request of `principal` (DESIGN D5), for either protocol era: tools (filtered by
 * `listing`; failures are `isError` problem results, D1; unknown tool -32602) and the read-only `service://enums/*`
 * resources (unknown URI -32002); prompts, logging and completions answer -32601. `listChanged: false`: the lists
 * never change. 2026-07-28 results carry the cache hints of {@link cacheHintsOf}; a `modern` (2026-07-28) server
 * also serves the Tasks extension ({@link serveTasks}). `admission`: the token's rate-limit update still in flight,
 * which a tool call waits for (see {@link callTool}).
 */
export function buildMcpServer(
  runtime: Runtime,
  principal: Principal,
  requestId: string,
  listing: ToolListing = FULL_LISTING,
  modern = false,
  admission: (() => Promise<void>) | null = null,
): Server {
  const server = new Server(
    { name: 'membership-service', title: 'Membership Service', version: API_VERSION, icons: [SERVER_ICON] },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      cacheHints: cacheHintsOf(listing),
      jsonSchemaValidator: JSON_SCHEMA_VALIDATOR,
      instructions:
        'Tools manage the team of your token: projects, subscribers, plans, access codes, webhooks and the activity log. Each tool description names the ability it needs. Failures are results with isError and a problem document (code, hint, docs_url) in structuredContent. Enumerations are resources under service://enums/.',
    },
  );
  server.setRequestHandler('tools/list', async () => listToolsResult(principal, listing) as never);
  server.setRequestHandler('tools/call', async (request, context) => {
    const { name, arguments: args } = request.params;
    const tool = toolDefinition(name);
    // Destructive and bulk tools the token may run pass the confirmation gate first.
    const gate =
      tool && args && takesConfirmation(tool) && canCall(principal, tool) && !listing.readOnly
        ? confirmationGate(
            tool,
            args,
            await teamConfirmationKey(runtime, principal.teamId),
            principal.tokenId,
            requestId,
            context.mcpReq,
          )
        : { args };
    if ('answer' in gate) return gate.answer as never;
    // A client that declared the Tasks extension on this request gets long work as a task: a job still running answers
    // as its task, and a tool that runs inline otherwise (a large access-code batch) starts its job instead.
    const tasks = modern && declaresTasks(context.mcpReq.envelope);
    const asTask = tasks ? taskStartOf(name, gate.args) : null;
    const result = await callTool(runtime, principal, name, gate.args, requestId, listing, asTask, admission);
    if (!result) throw protocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const handle = tasks ? taskHandleOf(name, result) : null;
    return (handle ?? result) as never;
  });
  server.setRequestHandler('resources/list', async () => ({
    resources: ENUM_RESOURCES.map((resource) => ({
      uri: resource.uri,
      name: resource.name,
      title: resource.title,
      description: resource.description,
      mimeType: resource.mimeType,
    })),
  }));
  server.setRequestHandler('resources/templates/list', async () => ({ resourceTemplates: [] }));
  server.setRequestHandler('resources/read', async (request) => {
    const resource = enumResource(request.params.uri);
    if (!resource)
      throw Object.assign(protocolError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}`), {
        data: { uri: request.params.uri },
      });
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: JSON.stringify(resource.read()) }] };
  });
  if (modern) serveTasks(server, runtime, principal, listing, requestId);
  return server;
}

/** Every request method this server answers, with the SDK schema the whole request must match. */
const REQUEST_SCHEMAS: ReadonlyMap<string, StandardSchemaV1Sync> = new Map<string, StandardSchemaV1Sync>([
  ['initialize', specTypeSchemas.InitializeRequest],
  ['ping', specTypeSchemas.PingRequest],
  ['tools/list', specTypeSchemas.ListToolsRequest],
  ['tools/call', specTypeSchemas.CallToolRequest],
  ['resources/list', specTypeSchemas.ListResourcesRequest],
  ['resources/templates/list', specTypeSchemas.ListResourceTemplatesRequest],
  ['resources/read', specTypeSchemas.ReadResourceRequest],
]);

/** "Invalid params: <path>: <problem>; ..." for a request that does not match its method's schema, else null. */
function invalidParamsMessage(message: { method?: unknown }): string | null {
  const schema = typeof message.method === 'string' ? REQUEST_SCHEMAS.get(message.method) : undefined;
  const issues = schema?.['~standard'].validate(message).issues;
  if (!issues) return null;
  const problems = issues
    .map((issue) => {
      const path = (issue.path ?? []).map((part) => String(typeof part === 'object' ? part.key : part));
      return `${path.join('.') || '(request)'}: ${issue.message}`;
    })
    .join('; ');
  return `Invalid params: ${problems}`;
}

/**
 * The 2025 revisions' answer to a request the server refuses before the SDK sees it: -32602 for params that do not
 * match the method's schema ({@link invalidParamsMessage}), -32002 for a `resources/read` of an unknown URI (the SDK
 * encodes it -32602, the 2026-07-28 code); else null.
 */
function legacyRefusal(message: {
  method: string;
  params?: unknown;
}): { code: number; message: string; data?: unknown } | null {
  const invalid = invalidParamsMessage(message);
  if (invalid) return { code: ProtocolErrorCode.InvalidParams, message: invalid };
  const uri = (message.params as { uri?: unknown } | undefined)?.uri;
  if (message.method === 'resources/read' && typeof uri === 'string' && !enumResource(uri))
    return { code: RESOURCE_NOT_FOUND, message: `Resource not found: ${uri}`, data: { uri } };
  return null;
}

/**
 * Connects `server` (from {@link buildMcpServer}) to a 2025-era `transport`, answering the requests of
 * {@link legacyRefusal} itself instead of the SDK. Requests for methods this server does not answer pass through
 * (-32601).
 */
export async function connectMcpServer(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('the MCP server did not attach to the transport');
  transport.onmessage = (message, extra) => {
    if ('method' in message && 'id' in message) {
      const error = legacyRefusal(message);
      if (error) {
        transport
          .send({ jsonrpc: '2.0', id: message.id, error })
          .catch((error: unknown) => transport.onerror?.(error as Error));
        return;
      }
    }
    deliver(message, extra);
  };
}

/**
 * Serves one authenticated 2026-07-28 request (`parsed`, its JSON body) through the SDK's per-request entry: no
 * session, no `initialize`; the entry checks the `_meta` envelope and the `MCP-Protocol-Version`, `Mcp-Method` and
 * `Mcp-Name` headers against the body (400, -32020 on disagreement) and answers `server/discover` with the server's
 * identity, revision and capabilities. `admission`: as for {@link buildMcpServer}.
 */
export async function serveModernRequest(
  runtime: Runtime,
  principal: Principal,
  requestId: string,
  request: Request,
  parsed: unknown,
  admission: (() => Promise<void>) | null = null,
): Promise<Response> {
  const listing = toolListingOf(request);
  if (listing instanceof Response) return listing;
  const handler = createMcpHandler(() => buildMcpServer(runtime, principal, requestId, listing, true, admission), {
    legacy: 'reject',
  });
  try {
    const result = await handler.fetch(request, { parsedBody: parsed });
    return Array.isArray(parsed) ? result : withToolScopeChallenge(result, principal, parsed as object, request);
  } finally {
    await handler.close().catch(() => undefined);
  }
}
