import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type { JsonSchemaType, jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation';
import {
  CallToolRequestSchema,
  ErrorCode,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../auth/principal.js';
import { enumResource, ENUM_RESOURCES } from '../catalogues/resources.js';
import { API_VERSION } from '../catalogues/version.js';
import type { Runtime } from '../runtime.js';
import { callTool, FULL_LISTING, listToolsResult, type ToolListing } from './tools.js';

/** JSON-RPC error code for an unknown resource URI (MCP "Resources → Error handling"). */
const RESOURCE_NOT_FOUND = -32002;

/**
 * A JSON-RPC error for the SDK to answer with: `code` and `message` exactly (the SDK's `McpError`
 * would prefix the message with "MCP error <code>: ").
 */
function protocolError(code: number, message: string): Error {
  return Object.assign(new Error(message), { code });
}

let ajv: AjvJsonSchemaValidator | undefined;
/**
 * The SDK's JSON Schema validator (used only for elicitation, which this server never sends), made on
 * first use and shared by every server, instead of a new Ajv instance with its formats per request.
 */
const SHARED_VALIDATOR: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType) {
    return (ajv ??= new AjvJsonSchemaValidator()).getValidator<T>(schema);
  },
};

/**
 * Builds the MCP SDK `Server` for one request of `principal` (DESIGN D5): tools (filtered by `listing`; failures are
 * `isError` problem results, D1; unknown tool -32602) and the read-only `service://enums/*` resources (unknown URI
 * -32002); prompts, logging and completions answer -32601. `listChanged: false`: the lists never change.
 */
export function buildMcpServer(
  runtime: Runtime,
  principal: Principal,
  requestId: string,
  listing: ToolListing = FULL_LISTING,
): Server {
  const server = new Server(
    { name: 'membership-service', title: 'Membership Service', version: API_VERSION },
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false } },
      jsonSchemaValidator: SHARED_VALIDATOR,
      instructions:
        'Tools manage the team of your token: projects, subscribers, plans, access codes, webhooks and the activity log. Each tool description names the ability it needs. Failures are results with isError and a problem document (code, hint, docs_url) in structuredContent. Enumerations are resources under service://enums/.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => listToolsResult(principal, listing) as never);
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const result = await callTool(
      runtime,
      principal,
      request.params.name,
      request.params.arguments,
      requestId,
      listing,
    );
    if (!result) throw protocolError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name}`);
    return result;
  });
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({
    resources: ENUM_RESOURCES.map((resource) => ({
      uri: resource.uri,
      name: resource.name,
      title: resource.title,
      description: resource.description,
      mimeType: resource.mimeType,
    })),
  }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: [] }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const resource = enumResource(request.params.uri);
    if (!resource)
      throw Object.assign(protocolError(RESOURCE_NOT_FOUND, `Resource not found: ${request.params.uri}`), {
        data: { uri: request.params.uri },
      });
    return { contents: [{ uri: resource.uri, mimeType: resource.mimeType, text: JSON.stringify(resource.read()) }] };
  });
  return server;
}

/** Every request method this server answers, with the SDK schema the whole request must match. */
type RequestSchema = {
  safeParse(value: unknown): {
    success: boolean;
    error?: { issues: ReadonlyArray<{ path: PropertyKey[]; message: string }> };
  };
};
const REQUEST_SCHEMAS: ReadonlyMap<string, RequestSchema> = new Map<string, RequestSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/templates/list', ListResourceTemplatesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
]);

/**
 * Connects `server` (from {@link buildMcpServer}) to `transport`, answering a request whose params do
 * not match its method's schema with JSON-RPC error -32602 "Invalid params: <path>: <problem>; ..."
 * (JSON-RPC 2.0 §5.1) instead of reaching the SDK, which would answer -32603 (internal error) with a
 * raw validation dump. Requests for methods this server does not answer pass through (-32601).
 */
export async function connectMcpServer(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  const deliver = transport.onmessage;
  if (!deliver) throw new Error('the MCP server did not attach to the transport');
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const parsed = REQUEST_SCHEMAS.get(message.method)?.safeParse(message);
      if (parsed && !parsed.success) {
        const problems = (parsed.error?.issues ?? [])
          .map((issue) => `${issue.path.map(String).join('.') || '(request)'}: ${issue.message}`)
          .join('; ');
        transport
          .send({
            jsonrpc: '2.0',
            id: message.id,
            error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${problems}` },
          })
          .catch((error: unknown) => transport.onerror?.(error as Error));
        return;
      }
    }
    deliver(message, extra);
  };
}
