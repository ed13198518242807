/**
 * Tool catalogue, GENERATED from operations (interface "Tool server"; D5, D12, D13): a tool takes path, query and body
 * as one object (plus `idempotency_key` on writes, D3), checks its own ability (named in its description) and returns
 * the operation's output.
 */
import * as z from '../schemas/zod.js';
import { AUTHENTICATED, type RequiredAbility, type ToolKind } from '../operations/definition.js';
import { TOOL_OPERATIONS, inputSchemaOf } from '../operations/registry.js';

/** MCP tool annotations (hints for clients; `openWorldHint` is always false: the tools touch only this service). */
interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

/** One tool of the catalogue. */
export interface ToolDefinition<N extends string = string> {
  /** snake_case tool name, e.g. `list_projects`. */
  readonly name: N;
  /** Human title. */
  readonly title: string;
  /**
   * What the tool does; always ends with ``Requires ability `<ability>`.`` (DESIGN D5), or, for a tool that
   * needs no ability beyond the gate, ``Requires no ability beyond `mcp:full`.``
   */
  readonly description: string;
  /**
   * The ability the calling token must hold, besides the `mcp:full` gate; `AUTHENTICATED` for a tool that
   * needs none (`get_team`, the smoke test, DESIGN D2).
   */
  readonly ability: RequiredAbility;
  readonly annotations: ToolAnnotations;
  /** The zod (v4) schema of the arguments; strict, so unknown arguments are rejected. */
  readonly inputSchema: z.ZodMiniObject;
  /** The zod schema of `structuredContent` on success. */
  readonly outputSchema: z.ZodMiniType;
  /** True for tools over team-wide data: a project-scoped token gets TOKEN_MISSING_ABILITY. */
  readonly teamWide: boolean;
  /** The operation the tool runs. */
  readonly operationId: string;
}

const ANNOTATIONS: Record<ToolKind, ToolAnnotations> = {
  read: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  create: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  update: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  destructive: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
};

const describeWithAbility = (summary: string, ability: RequiredAbility) =>
  ability === AUTHENTICATED
    ? `${summary} Requires no ability beyond \`mcp:full\`.`
    : `${summary} Requires ability \`${ability}\`.`;
const GenericObject = z.looseObject({});

type OperationToolName = (typeof TOOL_OPERATIONS)[number]['tool']['name'];
/** Union of every tool name, e.g. `'list_projects'`. */
export type ToolName = OperationToolName;

/** Every tool of the tool server (interface "Endpoints → Tool server"): the operations' tools in module order. */
export const TOOL_DEFINITIONS: readonly ToolDefinition<ToolName>[] = TOOL_OPERATIONS.map((operation) => ({
  name: operation.tool.name,
  title: operation.tool.title,
  description: describeWithAbility(
    operation.tool.description ?? operation.summary,
    operation.ability as RequiredAbility,
  ),
  ability: operation.ability as RequiredAbility,
  annotations: { ...ANNOTATIONS[operation.tool.kind] },
  inputSchema: inputSchemaOf(operation, { withIdempotencyKey: true }),
  outputSchema: operation.output ?? GenericObject,
  teamWide: operation.teamWide,
  operationId: operation.id,
}));

/** Every tool name, in catalogue order. */
export const TOOL_NAMES: readonly ToolName[] = TOOL_DEFINITIONS.map((definition) => definition.name);

const BY_NAME = new Map(TOOL_DEFINITIONS.map((definition) => [definition.name, definition]));

/** The catalogue entry of a tool, or `undefined` for an unknown name. */
export function toolDefinition(name: string): ToolDefinition<ToolName> | undefined {
  return BY_NAME.get(name);
}
