/**
 * Confirmation before destructive tool calls and dry runs of bulk ones (DESIGN D5): a `destructiveHint` tool (or a
 * call that disables a webhook endpoint) first answers with a plain summary of what it would change, and runs only
 * with the confirmation — on 2026-07-28 an `input_required` elicitation answered by the client, on any revision a
 * `confirm` argument equal to the summary's token. `dry_run: true` returns the summary and changes nothing.
 */
import { createHmac } from 'node:crypto';
import { equalInConstantTime } from '../constant-time.js';
import {
  acceptedContent,
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  type InputRequiredResult,
} from '@modelcontextprotocol/server';
import * as z from '../schemas/zod.js';
import { ProblemError, toProblem } from '../errors.js';
import type { ToolDefinition } from '../catalogues/tools.js';

/** Tools that change many objects in one call: they take `dry_run` without needing a confirmation. */
const BULK_TOOLS: ReadonlySet<string> = new Set(['generate_access_codes', 'replay_dead_webhook_deliveries']);

/**
 * Tools not destructive in general (no `destructiveHint`) whose call is with some arguments: it then needs the
 * confirmation. Disabling a webhook endpoint stops its deliveries until it is enabled again.
 */
const DESTRUCTIVE_WITH: Readonly<Record<string, (args: Record<string, unknown>) => boolean>> = {
  update_webhook_endpoint: (args) => args.is_active === false,
};

/** The MCP-only arguments of the tools that take them (never part of the operation's input). */
const EXTRA_ARGUMENTS = z.object({
  confirm: z.optional(
    z
      .string()
      .check(
        z.maxLength(64),
        z.describe(
          'The token of the summary this tool answered with (its confirm field): runs the change after the user saw it.',
        ),
      ),
  ),
  dry_run: z.optional(z.boolean().check(z.describe('true returns the summary of the change and changes nothing.'))),
});

/** What a confirmation-gated call would change, as its summary result (`structuredContent` of a dry run). */
export const ChangeSummary = z.object({
  tool: z.string(),
  summary: z.string(),
  changes: z.record(z.string(), z.unknown()),
  confirm: z.string(),
  dry_run: z.boolean(),
});
type ChangeSummary = z.output<typeof ChangeSummary>;

/** True when a call of `tool` with `args` needs a confirmation: `destructiveHint` or {@link DESTRUCTIVE_WITH}. */
function needsConfirmation(tool: ToolDefinition, args: Record<string, unknown>): boolean {
  return tool.annotations.destructiveHint === true || (DESTRUCTIVE_WITH[tool.name]?.(args) ?? false);
}

/** True when `tool` takes the MCP-only `confirm`/`dry_run` arguments (destructive, bulk and sometimes destructive). */
export function takesConfirmation(tool: ToolDefinition): boolean {
  return tool.annotations.destructiveHint === true || BULK_TOOLS.has(tool.name) || tool.name in DESTRUCTIVE_WITH;
}

/** The published JSON Schema properties of the MCP-only arguments, for the tools of {@link takesConfirmation}. */
export function confirmationProperties(): Record<string, unknown> {
  return (z.toJSONSchema(EXTRA_ARGUMENTS, { io: 'input' }) as { properties: Record<string, unknown> }).properties;
}

/** The object a tool acts on, from its title ("Refund payment" → "payment"). */
function objectOf(tool: ToolDefinition): string {
  return tool.title.split(' ').slice(1).join(' ').toLowerCase();
}

/** The changes a call would make, from its arguments: objects, counts and money, in the words of the arguments. */
function changesOf(
  tool: ToolDefinition,
  args: Record<string, unknown>,
): { text: string; changes: Record<string, unknown> } {
  const { idempotency_key: _key, ...changes } = args;
  const target = typeof args.id === 'string' ? `${objectOf(tool)} ${args.id}` : objectOf(tool);
  const details: string[] = [];
  if (typeof args.count === 'number') details.push(`${args.count} new codes`);
  if (typeof args.plan_id === 'string') details.push(`for plan ${args.plan_id}`);
  if (tool.name === 'refund_payment')
    details.push(
      typeof args.amount === 'number'
        ? `${args.amount} in the payment's minor currency unit`
        : 'all that is left to refund',
    );
  if (args.cancel === true) details.push('and cancels the subscription at once');
  if (tool.name === 'cancel_subscription')
    details.push(args.at_period_end === false ? 'at once' : 'at the end of the current period');
  if (typeof args.since_hours === 'number') details.push(`every dead delivery of the last ${args.since_hours} hours`);
  if (typeof args.endpoint_id === 'string') details.push(`to endpoint ${args.endpoint_id}`);
  if (typeof args.event_type === 'string') details.push(`of type ${args.event_type}`);
  if (tool.name === 'update_webhook_endpoint' && args.is_active === false)
    details.push('and disable it: no deliveries until it is enabled again');
  if (typeof args.reason === 'string') details.push(`(reason: ${args.reason})`);
  const action = tool.title.split(' ')[0];
  return { text: [`${action} ${target}`, ...details].join(' ') + '.', changes };
}

/**
 * The summary of a call of `tool` with `args` by the token `tokenId`; its token, an HMAC under the team's confirmation
 * key `key` (confirmation-key.ts), names exactly this call and only the server can make it.
 */
function summaryOf(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  key: Buffer,
  tokenId: string,
  dryRun: boolean,
): ChangeSummary {
  const { text, changes } = changesOf(tool, args);
  const digest = createHmac('sha256', key)
    .update(JSON.stringify([tokenId, tool.name, changes]))
    .digest('base64url');
  return { tool: tool.name, summary: text, changes, confirm: `cfm_${digest.slice(0, 22)}`, dry_run: dryRun };
}

/** What the tool-server request knows about the client's confirmation (the SDK's `ctx.mcpReq`). */
export interface ConfirmationContext {
  /** The 2026-07-28 `_meta` envelope, keyed by the SDK's `*_META_KEY` names; absent on 2025-era requests. */
  envelope?: Record<string, unknown>;
  inputResponses?: Record<string, unknown>;
  requestState: () => unknown;
}

/** A tool result the gate answers with instead of running the tool. */
type GateAnswer = InputRequiredResult | Record<string, unknown>;

/** The form a 2026-07-28 client shows the user: one yes/no question. */
const CONFIRM_FORM = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Confirm' } },
  required: ['confirm'],
};

/**
 * The confirmation gate of one `tools/call` of `tool` (which takes {@link takesConfirmation} arguments) by token
 * `tokenId` of the team whose confirmation key is `key`: splits `confirm`/`dry_run` off `args` and either lets the call
 * run (`{ args }`) or answers for it (`{ answer }`): the summary on a dry run; for an unconfirmed destructive call,
 * `input_required` when the 2026-07-28 client can answer an elicitation, else an `isError` VALIDATION_FAILED result
 * naming the `confirm` argument. Never throws.
 */
export function confirmationGate(
  tool: ToolDefinition,
  rawArgs: Record<string, unknown>,
  key: Buffer,
  tokenId: string,
  requestId: string,
  context: ConfirmationContext,
): { args: Record<string, unknown> } | { answer: GateAnswer } {
  const { confirm, dry_run: dryRun, ...args } = rawArgs;
  // Arguments the tool refuses get its field errors, unconfirmed.
  if (!tool.inputSchema.safeParse(args).success) return { args };
  const summary = summaryOf(tool, args, key, tokenId, dryRun === true);
  if (dryRun === true) return { answer: result(summary, false) };
  const isToken = (value: unknown) => typeof value === 'string' && equalInConstantTime(value, summary.confirm);
  if (!needsConfirmation(tool, args) || isToken(confirm)) return { args };
  const answered = acceptedContent<{ confirm?: unknown }>(context.inputResponses, 'confirm');
  if (answered?.confirm === true && isToken(context.requestState())) return { args };
  // A user who saw the question and did not agree gets the refusal, not the question again.
  const declined = context.inputResponses?.confirm !== undefined;
  const capabilities = context.envelope?.[CLIENT_CAPABILITIES_META_KEY] as { elicitation?: unknown } | undefined;
  if (!declined && capabilities?.elicitation)
    return {
      answer: inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({ message: `${summary.summary} Confirm?`, requestedSchema: CONFIRM_FORM }),
        },
        requestState: summary.confirm,
      }),
    };
  const refusal = new ProblemError(
    'VALIDATION_FAILED',
    `${tool.name} needs a confirmation: ${summary.summary} Show this to the user, then call again with confirm: "${summary.confirm}".`,
    { errors: [{ path: 'arguments.confirm', message: `Must be "${summary.confirm}" once the user agreed.` }] },
  );
  return { answer: result(toProblem(refusal, requestId).problem as unknown as Record<string, unknown>, true) };
}

function result(structured: Record<string, unknown>, isError: boolean): Record<string, unknown> {
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured, isError };
}
