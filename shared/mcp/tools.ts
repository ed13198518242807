import { z } from 'zod';
import { Problem } from '../schemas/common.js';
import { listActivity } from '../activity.js';
import { authorizeOperation } from '../auth/authorize.js';
import { listTokens, type Principal } from '../auth/tokens.js';
import { TOOL_DEFINITIONS, toolDefinition, type ToolDefinition, type ToolName } from '../catalogues/tools.js';
import { errorCode } from '../catalogues/error-codes.js';
import { ProblemError, cursorRejection, fieldErrors, toProblem, type ProblemDocument } from '../errors.js';
import { beginIdempotentRequest, parseIdempotencyKey, requestFingerprint } from '../limits/idempotency.js';
import { createProject, getProject, listProjects } from '../projects.js';
import type { Runtime } from '../runtime.js';
import { ActivityList, Project, ProjectList, TokenList, WebhookDelivery, WebhookDeliveryList, WebhookEndpoint, WebhookEndpointList, WebhookEndpointWithSecret } from '../schemas/resources.js';
import { Team } from '../schemas/resources.js';
import { getTeam } from '../teams.js';
import { recordActivity } from '../activity.js';
import { createWebhookEndpoint, deleteWebhookEndpoint, getWebhookEndpoint, listWebhookEndpoints, rotateWebhookEndpointSecret, updateWebhookEndpoint } from '../webhooks/endpoints.js';
import { getDelivery, listDeliveries, replayDeadDeliveries, retryDelivery, sendTestEvent } from '../webhooks/deliveries.js';
import { logger } from '../logger.js';

/** What a tool handler receives: validated arguments (without `idempotency_key`). */
export interface ToolContext {
  runtime: Runtime;
  principal: Principal;
  args: Record<string, unknown>;
}

/** One entry of the tool table: the catalogue definition, its output schema and its handler. */
export interface ToolEntry {
  definition: ToolDefinition<ToolName>;
  /**
   * True for tools over team-wide data (tokens, activity, webhooks, members, roles, groups): a
   * project-scoped token gets TOKEN_MISSING_ABILITY, as on the matching REST routes (`authorizeOperation`).
   */
  teamWide: boolean;
  /** zod schema of `structuredContent`; always an object. */
  outputSchema: z.ZodType;
  /** Null for tools published ahead of their domain: calls get NOT_IMPLEMENTED. */
  handler: ((context: ToolContext) => Promise<Record<string, unknown>>) | null;
}

const page = (args: Record<string, unknown>) => ({ limit: (args.limit as number | undefined) ?? 25, cursor: args.cursor as string | undefined });
const GenericObject = z.object({}).loose();
const GenericList = z.object({ data: z.array(GenericObject), next_cursor: z.string().nullable() });
const Deleted = z.object({ id: z.string(), deleted: z.literal(true) });
const Replayed = z.object({ replayed: z.number().int() });
const asRecord = (value: unknown) => value as Record<string, unknown>;

/**
 * Tools over team-wide data, which a `scope:project:<uuid>` token does not cover (the same set of data
 * as the REST routes marked `teamWide` in the route table).
 */
const TEAM_WIDE_TOOLS: ReadonlySet<ToolName> = new Set<ToolName>([
  'list_team_members',
  'list_roles',
  'get_role',
  'list_groups',
  'get_group',
  'list_tokens',
  'get_activity_log',
  'list_webhook_endpoints',
  'get_webhook_endpoint',
  'create_webhook_endpoint',
  'update_webhook_endpoint',
  'delete_webhook_endpoint',
  'rotate_webhook_endpoint_secret',
  'send_test_webhook_event',
  'list_webhook_deliveries',
  'get_webhook_delivery',
  'retry_webhook_delivery',
  'replay_dead_webhook_deliveries',
]);

/** Handlers and output schemas of the implemented tools. */
const IMPLEMENTED: Partial<Record<ToolName, Omit<ToolEntry, 'definition' | 'teamWide'>>> = {
  list_projects: {
    outputSchema: ProjectList,
    handler: async ({ runtime, principal, args }) => {
      const result = await listProjects(runtime, principal, page(args));
      return args.status ? { ...result, data: result.data.filter((project) => project.status === args.status) } : result;
    },
  },
  get_project: { outputSchema: Project, handler: async ({ runtime, principal, args }) => asRecord(await getProject(runtime, principal, args.project_id as string)) },
  create_project: { outputSchema: Project, handler: async ({ runtime, principal, args }) => asRecord(await createProject(runtime, principal, args as never)) },
  get_team: { outputSchema: Team, handler: async ({ runtime, principal }) => asRecord(principal.team ?? (await getTeam(runtime.store, principal.teamId))) },
  list_tokens: {
    outputSchema: TokenList,
    handler: async ({ runtime, principal, args }) => {
      const result = await listTokens(runtime.store, principal.teamId, page(args));
      const data = result.data.filter((token) => args.include_revoked || !token.revoked_at).map(({ team_id: _team, ...token }) => token);
      return { data, next_cursor: result.next_cursor };
    },
  },
  get_activity_log: {
    outputSchema: ActivityList,
    handler: async ({ runtime, principal, args }) => {
      return asRecord(await listActivity(runtime.store, principal.teamId, { ...page(args), token_id: args.token_id as string | undefined, operation: args.operation as string | undefined }));
    },
  },
  list_webhook_endpoints: {
    outputSchema: WebhookEndpointList,
    handler: async ({ runtime, principal, args }) => {
      const result = await listWebhookEndpoints(runtime, principal, page(args));
      return args.is_active === undefined ? result : { ...result, data: result.data.filter((endpoint) => endpoint.is_active === args.is_active) };
    },
  },
  get_webhook_endpoint: { outputSchema: WebhookEndpoint, handler: async ({ runtime, principal, args }) => asRecord(await getWebhookEndpoint(runtime, principal, args.id as string)) },
  create_webhook_endpoint: { outputSchema: WebhookEndpointWithSecret, handler: async ({ runtime, principal, args }) => asRecord(await createWebhookEndpoint(runtime, principal, args as never)) },
  update_webhook_endpoint: {
    outputSchema: WebhookEndpoint,
    handler: async ({ runtime, principal, args }) => {
      const { id, ...changes } = args;
      return asRecord(await updateWebhookEndpoint(runtime, principal, id as string, changes as never));
    },
  },
  delete_webhook_endpoint: { outputSchema: Deleted, handler: async ({ runtime, principal, args }) => asRecord(await deleteWebhookEndpoint(runtime, principal, args.id as string)) },
  rotate_webhook_endpoint_secret: { outputSchema: WebhookEndpointWithSecret, handler: async ({ runtime, principal, args }) => asRecord(await rotateWebhookEndpointSecret(runtime, principal, args.id as string, 'api')) },
  send_test_webhook_event: { outputSchema: WebhookDelivery, handler: async ({ runtime, principal, args }) => asRecord(await sendTestEvent(runtime, principal, args.id as string)) },
  list_webhook_deliveries: {
    outputSchema: WebhookDeliveryList,
    handler: async ({ runtime, principal, args }) =>
      asRecord(await listDeliveries(runtime, principal, { ...page(args), endpoint_id: args.endpoint_id as string | undefined, status: args.status as never, event_type: args.event_name as string | undefined })),
  },
  get_webhook_delivery: { outputSchema: WebhookDelivery, handler: async ({ runtime, principal, args }) => asRecord(await getDelivery(runtime, principal, args.id as string)) },
  retry_webhook_delivery: { outputSchema: WebhookDelivery, handler: async ({ runtime, principal, args }) => asRecord(await retryDelivery(runtime, principal, args.id as string)) },
  replay_dead_webhook_deliveries: { outputSchema: Replayed, handler: async ({ runtime, principal, args }) => asRecord(await replayDeadDeliveries(runtime, principal, args.since_hours as number)) },
};

/**
 * The tool table (DESIGN §2): every one of the 42 catalogue tools with its output schema and handler.
 * Tools whose domain is not built yet have `handler: null` and a generic output schema.
 */
export const TOOL_TABLE: readonly ToolEntry[] = TOOL_DEFINITIONS.map((definition) => {
  const implemented = IMPLEMENTED[definition.name];
  const isList = definition.name.startsWith('list_');
  return {
    definition,
    teamWide: TEAM_WIDE_TOOLS.has(definition.name),
    outputSchema: implemented?.outputSchema ?? (isList ? GenericList : GenericObject),
    handler: implemented?.handler ?? null,
  };
});

const TOOLS_BY_NAME = new Map(TOOL_TABLE.map((entry) => [entry.definition.name as string, entry]));

/** JSON Schema of a zod schema as MCP `tools/list` needs it (an object schema). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  // A schema with an id comes out as `{ $ref: '#/$defs/Id', $defs }`; MCP needs `type: object` at the
  // root, so the referenced definition becomes the root and `$defs` stays beside it for nested refs.
  const reference = typeof rest.$ref === 'string' ? /^#\/\$defs\/(.+)$/.exec(rest.$ref) : null;
  if (reference && rest.$defs && typeof rest.$defs === 'object') {
    const { [reference[1]]: root, ...others } = rest.$defs as Record<string, Record<string, unknown>>;
    return Object.keys(others).length ? { ...root, $defs: { ...others, [reference[1]]: root } } : root;
  }
  return rest;
}

/**
 * The published `outputSchema` of a tool: an object that is either the tool's result or, on a result
 * with `isError: true`, the problem document (DESIGN D1 puts it in `structuredContent`). Clients such as
 * the official SDK validate `structuredContent` even on errors, so both shapes must be admitted.
 */
function resultOrProblemSchema(result: z.ZodType): Record<string, unknown> {
  const { $defs: resultDefinitions, ...resultRoot } = jsonSchema(result, 'output');
  const { $defs: problemDefinitions, ...problemRoot } = jsonSchema(Problem, 'output');
  const definitions = { ...(resultDefinitions as object | undefined), ...(problemDefinitions as object | undefined) };
  return {
    type: 'object',
    anyOf: [resultRoot, problemRoot],
    ...(Object.keys(definitions).length ? { $defs: definitions } : {}),
  };
}

/** The `tools/list` result: all 42 tools with input/output JSON Schemas and annotations (DESIGN D5). */
export function listToolsResult(): { tools: Array<Record<string, unknown>> } {
  return {
    tools: TOOL_TABLE.map((entry) => ({
      name: entry.definition.name,
      title: entry.definition.title,
      description: entry.definition.description,
      inputSchema: jsonSchema(entry.definition.inputSchema, 'input'),
      outputSchema: resultOrProblemSchema(entry.outputSchema),
      annotations: { title: entry.definition.title, ...entry.definition.annotations },
    })),
  };
}

/** An MCP `tools/call` result (text content mirrors `structuredContent`). */
export interface ToolCallResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

function problemResult(problem: ProblemDocument): ToolCallResult {
  return { content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem as unknown as Record<string, unknown>, isError: true };
}

/**
 * The tool name as the activity log records it: a name of the table as is; anything else that looks
 * like a tool name (snake_case, ≤ 64 characters) as sent; any other string — which could be something
 * pasted by mistake, a token included — as `(invalid tool name)`, so the log never stores it.
 */
function loggableToolName(name: string): string {
  return TOOLS_BY_NAME.has(name) || /^[a-z][a-z0-9_]{0,63}$/.test(name) ? name : '(invalid tool name)';
}

/**
 * Runs one `tools/call` (interface "Tool-server authorization" 2–3, DESIGN D1, D3, D5), in the order
 * every tool shares: per-tool ability and token scope (TOKEN_MISSING_ABILITY, `authorizeOperation`) →
 * argument validation (VALIDATION_FAILED with field errors under `arguments.`) → NOT_IMPLEMENTED for
 * tools published ahead of their domain → optional `idempotency_key` (the `Idempotency-Key` rules:
 * replay with `_meta['idempotent-replay']`, IDEMPOTENCY_KEY_REUSED, IDEMPOTENCY_KEY_IN_USE; only a
 * successful result is stored) → handler. Failures are tool results with `isError: true` whose
 * `structuredContent` is the problem document. Every call, whatever its outcome (an unknown tool
 * included), is written to the activity log with the token id, tool name, outcome, duration and request id.
 * Returns null for a tool name that does not exist (the caller answers a JSON-RPC error). Never throws.
 */
export async function callTool(runtime: Runtime, principal: Principal, name: string, rawArgs: unknown, requestId: string): Promise<ToolCallResult | null> {
  const started = performance.now();
  const entry = TOOLS_BY_NAME.get(name);
  let result: ToolCallResult | null = null;
  let outcome = 'ok';
  let status = 200;
  try {
    if (!entry) {
      outcome = 'NOT_FOUND';
      status = 404;
      return null;
    }
    authorizeOperation(principal, { ability: entry.definition.ability, teamWide: entry.teamWide });
    const parsed = entry.definition.inputSchema.safeParse(rawArgs ?? {});
    if (!parsed.success) throw new ProblemError('VALIDATION_FAILED', `The arguments of ${name} are not valid.`, { errors: fieldErrors('arguments', parsed.error.issues) });
    const { idempotency_key: rawKey, ...args } = parsed.data as Record<string, unknown>;
    if (!entry.handler) throw new ProblemError('NOT_IMPLEMENTED', `The tool ${name} is published but not available yet.`);
    const key = parseIdempotencyKey(rawKey as string | undefined, 'arguments.idempotency_key');
    const claim = key ? await beginIdempotentRequest(runtime.store, runtime.clock, principal.teamId, key, requestFingerprint(['mcp', name, JSON.stringify(args)])) : null;
    if (claim?.kind === 'replay') {
      result = JSON.parse(claim.response.body) as ToolCallResult;
      result._meta = { 'idempotent-replay': true };
      return result;
    }
    let structured: Record<string, unknown>;
    try {
      structured = await entry.handler({ runtime, principal, args });
    } catch (error) {
      await claim?.release().catch(() => undefined);
      throw (args.cursor !== undefined && cursorRejection(error, 'arguments.cursor')) || error;
    }
    result = { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
    // The tool took effect: its key is completed, never released, even if storing the result fails.
    await claim?.complete({ status: 200, headers: {}, body: JSON.stringify(result) }).catch((error) =>
      logger.error('idempotency record not completed', { request_id: requestId, tool: name, error: error as Error }),
    );
    return result;
  } catch (error) {
    if (!(error instanceof ProblemError)) logger.error('unexpected error', { request_id: requestId, tool: name, error: error as Error });
    const { problem } = toProblem(error, requestId);
    outcome = problem.code;
    status = errorCode(problem.code).status;
    result = problemResult(problem);
    return result;
  } finally {
    await recordActivity(runtime.store, runtime.clock, principal.teamId, {
      token_id: principal.tokenId,
      surface: 'mcp',
      operation: loggableToolName(name),
      outcome,
      status,
      duration_ms: Math.round(performance.now() - started),
      request_id: requestId,
    }).catch((error) => logger.error('activity write failed', { request_id: requestId, error: error as Error }));
  }
}

export { toolDefinition };
