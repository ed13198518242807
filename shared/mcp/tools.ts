import * as z from '../schemas/zod.js';
import { Problem } from '../schemas/common.js';
import { authorizeOperation } from '../auth/authorize.js';
import { actorOf, type Principal } from '../auth/principal.js';
import { TOOL_DEFINITIONS, toolDefinition, type ToolDefinition, type ToolName } from '../catalogues/tools.js';
import { mcpHandlerOf } from './handlers.js';
import { ProblemError, fieldErrors, type ProblemDocument } from '../errors.js';
import { parseIdempotencyKey } from '../limits/idempotency.js';
import { invokeOperation, recordRefusedCall } from '../operations/invoke.js';
import {
  operationById,
  pipelineOperationById,
  type InternalOperationId,
  type OperationId,
} from '../operations/registry.js';
import type { Runtime } from '../runtime.js';
import { ChangeSummary, confirmationProperties, takesConfirmation } from './confirmation.js';
import { toolIcon } from './icons.js';

/** The tool table (DESIGN D13): the 42 catalogue tools, generated from the operation definitions. */
export const TOOL_TABLE: readonly ToolDefinition<ToolName>[] = TOOL_DEFINITIONS;

/**
 * Keywords that describe a schema rather than constrain one type: they stay on the node when its `type` array is split.
 */
const ANNOTATION_KEYWORDS = new Set([
  'title',
  'description',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$comment',
  'id',
  'enum',
  'const',
]);

/**
 * Rewrites a generated JSON Schema for strict MCP clients without changing what it admits: `type: [T, "null"]` becomes
 * an `anyOf` (annotations, `enum`, `const` stay on the node; an existing `anyOf` moves under `allOf`) and an empty
 * `additionalProperties: {}` is dropped. Recurses through every subschema; returns a new value.
 */
export function strictClientSchema(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strictClientSchema);
  if (!node || typeof node !== 'object') return node;
  const source = node as Record<string, unknown>;
  const result: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(source)) {
    if (
      keyword === 'additionalProperties' &&
      value &&
      typeof value === 'object' &&
      !Array.isArray(value) &&
      Object.keys(value).length === 0
    )
      continue;
    result[keyword] = strictClientSchema(value);
  }
  if (!Array.isArray(result.type)) return result;
  const types = result.type as string[];
  if (types.length === 1) return { ...result, type: types[0] };
  const kept: Record<string, unknown> = {};
  const typed: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(result)) {
    if (keyword === 'type') continue;
    if (ANNOTATION_KEYWORDS.has(keyword) || keyword === 'anyOf' || keyword === '$defs') kept[keyword] = value;
    else typed[keyword] = value;
  }
  const branches = types.map((type) => (type === 'null' ? { type } : { type, ...typed }));
  if (kept.anyOf) {
    const { anyOf, ...rest } = kept;
    return { ...rest, allOf: [{ anyOf }, { anyOf: branches }] };
  }
  return { ...kept, anyOf: branches };
}

/** JSON Schema of a zod schema as MCP `tools/list` needs it (an object schema, in {@link strictClientSchema} form). */
function jsonSchema(schema: z.ZodMiniType, io: 'input' | 'output'): Record<string, unknown> {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema: _drop, ...rest } = strictClientSchema(generated) as Record<string, unknown>;
  // A schema with an id comes out as `{ $ref: '#/$defs/Id', $defs }`; MCP needs `type: object` at the
  // root, so the referenced definition becomes the root and `$defs` stays beside it for nested refs.
  const reference = typeof rest.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(rest.$ref) : null;
  if (reference && rest.$defs && typeof rest.$defs === 'object') {
    const { [reference[1]]: root, ...others } = rest.$defs as Record<string, Record<string, unknown>>;
    return Object.keys(others).length ? { ...root, $defs: { ...others, [reference[1]]: root } } : root;
  }
  return rest;
}

/** A tool's published input schema with the MCP-only `confirm` and `dry_run` arguments added. */
function withConfirmationArguments(schema: Record<string, unknown>): Record<string, unknown> {
  return { ...schema, properties: { ...(schema.properties as object), ...confirmationProperties() } };
}

/**
 * The published `outputSchema` of a tool: an object that is either the tool's result or, on a result
 * with `isError: true`, the problem document (DESIGN D1 puts it in `structuredContent`). Clients such as
 * the official SDK validate `structuredContent` even on errors, so both shapes must be admitted.
 */
function resultOrProblemSchema(result: z.ZodMiniType, withSummary: boolean): Record<string, unknown> {
  const { $defs: resultDefinitions, ...resultRoot } = jsonSchema(result, 'output');
  const { $defs: problemDefinitions, ...problemRoot } = jsonSchema(Problem, 'output');
  const definitions = { ...(resultDefinitions as object | undefined), ...(problemDefinitions as object | undefined) };
  return {
    type: 'object',
    anyOf: withSummary ? [resultRoot, problemRoot, jsonSchema(ChangeSummary, 'output')] : [resultRoot, problemRoot],
    ...(Object.keys(definitions).length ? { $defs: definitions } : {}),
  };
}

/**
 * What a `tools/list` or `tools/call` request opted into (DESIGN D5), from the `MCP-Tools-Filter` and
 * `MCP-Read-Only` headers or the `tools` and `read_only` query parameters of the MCP URL.
 */
export interface ToolListing {
  /** `MCP-Tools-Filter: callable` / `?tools=callable`: list only the tools this token can call. */
  callableOnly: boolean;
  /** `MCP-Read-Only: 1` / `?read_only=1`: only `readOnlyHint` tools are listed, and only they can be called. */
  readOnly: boolean;
}

/** Every tool listed, every tool callable: what a request gets without opting in. */
export const FULL_LISTING: ToolListing = { callableOnly: false, readOnly: false };

/** True when `principal` passes the tool's own authorization (ability and team-wide scope); never throws. */
export function canCall(principal: Principal, tool: ToolDefinition): boolean {
  try {
    authorizeOperation(principal, { ability: tool.ability, teamWide: tool.teamWide });
    return true;
  } catch {
    return false;
  }
}

let publishedTools: Array<Record<string, unknown>> | undefined;

/**
 * The `tools/list` result (DESIGN D5): by default all 42 tools with input/output JSON Schemas, annotations and their
 * group's icon, in table order. `listing.callableOnly` keeps the tools `principal` can call (its ability and, for
 * team-wide tools, no project scope); `listing.readOnly` keeps the `readOnlyHint` tools. The schemas are generated
 * once per process.
 */
export function listToolsResult(
  principal?: Principal,
  listing: ToolListing = FULL_LISTING,
): { tools: Array<Record<string, unknown>> } {
  publishedTools ??= TOOL_TABLE.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: takesConfirmation(tool)
      ? withConfirmationArguments(jsonSchema(tool.inputSchema, 'input'))
      : jsonSchema(tool.inputSchema, 'input'),
    outputSchema: resultOrProblemSchema(tool.outputSchema, takesConfirmation(tool)),
    annotations: { title: tool.title, ...tool.annotations },
    icons: [toolIcon(tool)].filter((icon) => icon !== undefined),
  }));
  const tools = publishedTools.filter((_published, index) => {
    const tool = TOOL_TABLE[index];
    if (listing.readOnly && !tool.annotations.readOnlyHint) return false;
    if (listing.callableOnly && (!principal || !canCall(principal, tool))) return false;
    return true;
  });
  return { tools };
}

/** An MCP `tools/call` result (text content mirrors `structuredContent`). */
export interface ToolCallResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

function problemResult(problem: ProblemDocument): ToolCallResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(problem) }],
    structuredContent: problem as unknown as Record<string, unknown>,
    isError: true,
  };
}

/**
 * The tool name as the activity log records it: a name of the table as is; anything else that looks
 * like a tool name (snake_case, ≤ 64 characters) as sent; any other string — which could be something
 * pasted by mistake, a token included — as `(invalid tool name)`, so the log never stores it.
 */
function loggableToolName(name: string): string {
  return toolDefinition(name) !== undefined || /^[a-z][a-z0-9_]{0,63}$/.test(name) ? name : '(invalid tool name)';
}

/**
 * Runs one `tools/call` through {@link invokeOperation} (interface "Tool-server authorization" 2–3, DESIGN D1, D3, D5):
 * read-only mode first, field errors under `arguments.`, failures as `isError` results carrying the problem; every
 * call, unknown tools included, is logged. `asTask`: the internal operation that starts the tool's job as an MCP task
 * instead (same arguments; its idempotency fingerprint differs from the inline call's). `admission`: the token's
 * rate-limit update, still in flight, that the call waits for before it answers or logs (a read runs beside it, D4).
 * Returns null for an unknown tool name. Never throws.
 */
export async function callTool(
  runtime: Runtime,
  principal: Principal,
  name: string,
  rawArgs: unknown,
  requestId: string,
  listing: ToolListing = FULL_LISTING,
  asTask: InternalOperationId | null = null,
  admission: (() => Promise<void>) | null = null,
): Promise<ToolCallResult | null> {
  const started = performance.now();
  const entry = toolDefinition(name);
  if (!entry) {
    await recordRefusedCall(runtime, {
      teamId: principal.teamId,
      tokenId: actorOf(principal).token_id,
      surface: 'mcp',
      operation: loggableToolName(name),
      outcome: 'NOT_FOUND',
      status: 404,
      durationMs: Math.round(performance.now() - started),
      requestId,
    });
    return null;
  }
  const outcome = await invokeOperation({
    runtime,
    principal,
    operation: asTask ? pipelineOperationById(asTask) : operationById(entry.operationId),
    handler: mcpHandlerOf(asTask ?? (entry.operationId as OperationId)),
    surface: 'mcp',
    requestId,
    startedAt: started,
    activityName: name,
    successStatus: 200,
    logReads: true,
    admit: () => {
      if (listing.readOnly && !entry.annotations.readOnlyHint) {
        throw new ProblemError(
          'TOKEN_MISSING_ABILITY',
          `This request is read-only (\`MCP-Read-Only: 1\` or \`?read_only=1\`) and ${name} is not a read-only tool; send the call without read-only mode to run it.`,
        );
      }
      return admission?.();
    },
    decode: () => {
      const parsed = entry.inputSchema.safeParse(rawArgs ?? {});
      if (!parsed.success)
        throw new ProblemError('VALIDATION_FAILED', `The arguments of ${name} are not valid.`, {
          errors: fieldErrors('arguments', parsed.error.issues),
        });
      const { idempotency_key: rawKey, ...args } = parsed.data;
      return {
        input: args,
        idempotencyKey: parseIdempotencyKey(rawKey as string | undefined, 'arguments.idempotency_key'),
        fingerprint: [principal.tokenId, 'mcp', name, JSON.stringify(args), ...(asTask ? ['task'] : [])],
        cursorField: 'arguments.cursor',
      };
    },
  });
  if (!outcome.ok) return problemResult(outcome.problem);
  const structured = outcome.result as Record<string, unknown>;
  const result: ToolCallResult = {
    content: [{ type: 'text', text: JSON.stringify(structured) }],
    structuredContent: structured,
  };
  return outcome.replayed ? { ...result, _meta: { 'idempotent-replay': true } } : result;
}

/**
 * A `tools/call` refused before it reached {@link callTool}: by authentication, the rate limit or the `mcp:full` gate.
 */
export interface RefusedToolCalls {
  /** The token the request named and that exists (its team's log gets the entries). */
  token: { id: string; teamId: string };
  /** The parsed POST body: one JSON-RPC message or a batch; anything else records nothing. */
  body: unknown;
  /** The error code the request was refused with (`outcome`) and its HTTP status. */
  outcome: string;
  status: number;
  requestId: string;
  /** Milliseconds from the request's arrival to the refusal. */
  durationMs: number;
}

/**
 * Logs one activity entry per `tools/call` of a request refused before any tool ran (401 with an existing token, 429,
 * 403 at `mcp:full`, 404 session; DESIGN D5). Other messages are not logged. Never throws (a failed write is logged).
 * Resolves with the number of entries written.
 */
export async function recordRefusedToolCalls(runtime: Runtime, refused: RefusedToolCalls): Promise<number> {
  const messages = Array.isArray(refused.body) ? refused.body : [refused.body];
  const names = messages.flatMap((message) => {
    if (!message || typeof message !== 'object') return [];
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    if (method !== 'tools/call') return [];
    return [typeof params?.name === 'string' ? loggableToolName(params.name) : '(invalid tool name)'];
  });
  const written = await Promise.all(
    names.map((operation) =>
      recordRefusedCall(runtime, {
        teamId: refused.token.teamId,
        tokenId: refused.token.id,
        surface: 'mcp',
        operation,
        outcome: refused.outcome,
        status: refused.status,
        durationMs: refused.durationMs,
        requestId: refused.requestId,
      }),
    ),
  );
  return written.filter(Boolean).length;
}

/**
 * True for one JSON-RPC `tools/call` of a known tool that `listing` lets run (in read-only mode, a tool annotated
 * `readOnlyHint`): such a call may run beside the rate limit's update, the pipeline holding back a write's handler
 * until it is admitted (DESIGN D4).
 */
export function runsBesideAdmission(message: unknown, listing: ToolListing): boolean {
  if (!message || typeof message !== 'object' || Array.isArray(message)) return false;
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  if (method !== 'tools/call' || typeof params?.name !== 'string') return false;
  const tool = toolDefinition(params.name);
  return tool !== undefined && (!listing.readOnly || tool.annotations.readOnlyHint === true);
}
