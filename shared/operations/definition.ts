import type * as z from '../schemas/zod.js';
import type { Ability } from '../catalogues/abilities.js';
import type { WebhookEventName } from '../catalogues/webhook-events.js';
import type { UsageMetric } from '../domain/billing/schema.js';
import type { RateLimitBucket } from '../limits/rate-limit.js';

/**
 * Operation definitions (DESIGN D13): every operation of the service is declared once, as data, in its
 * object's folder (`shared/domain/<objects>/operations.ts`). The REST route table, the MCP tool table,
 * `openapi.json`, authorization, idempotency, the activity log and the CDK routes are all generated from
 * these definitions. This module holds metadata types only (no runtime code), so `lib/` can import the
 * definitions.
 */

/**
 * The `ability` of an operation that needs a valid token and no ability (DESIGN D2: the smoke test
 * `GET /v1/teams/current` / `get_team`, which is how anyone checks that a token works): authenticated,
 * rate-limited and logged like any other operation, `x-required-scopes: []` in OpenAPI. On the tool
 * server the `mcp:full` gate still applies.
 */
export const AUTHENTICATED = 'authenticated';

/** What an operation asks of its caller's token: one ability, or {@link AUTHENTICATED} (a valid token, no ability). */
export type RequiredAbility = Ability | typeof AUTHENTICATED;

/** HTTP methods the REST API uses. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** How a tool changes things; decides its MCP annotations (`readOnlyHint`, `destructiveHint`, `idempotentHint`). */
export type ToolKind = 'read' | 'create' | 'update' | 'destructive';

/** The REST binding of an operation. */
export interface RestBinding {
  readonly method: HttpMethod;
  /** API Gateway style path, e.g. `/v1/projects/{project_id}`; each `{name}` is a field of `params`. */
  readonly path: string;
  /** HTTP status of success (200, 201 or 202). */
  readonly successStatus: number;
}

/** The MCP tool binding of an operation (interface "Tool server"). */
export interface ToolBinding {
  /** snake_case tool name, e.g. `list_projects`. */
  readonly name: string;
  /** Human title. */
  readonly title: string;
  readonly kind: ToolKind;
  /** What the tool does; the definition's `summary` when omitted. The ability sentence is appended (D5). */
  readonly description?: string;
}

/**
 * One operation. `params`, `query` and `body` are zod objects (strict); the operation's input is their
 * union as one object (a tool's arguments are exactly that object, plus `idempotency_key` on writes), so
 * their field names must not overlap. `output` is the success body; it is also the tool's output schema.
 */
interface OperationDefinition<
  Params extends z.ZodMiniObject = z.ZodMiniObject,
  Query extends z.ZodMiniObject = z.ZodMiniObject,
  Body extends z.ZodMiniObject = z.ZodMiniObject,
  Output extends z.ZodMiniType = z.ZodMiniType,
> {
  /** Unique camelCase id: the OpenAPI operationId, the Lambda's name stem and the activity log's `operation`. */
  readonly id: string;
  readonly summary: string;
  /** OpenAPI tag (the object's name). */
  readonly tag: string;
  /**
   * The ability the caller's token must hold (`x-required-scopes`); {@link AUTHENTICATED} for an operation
   * that needs a valid token and no ability (the smoke test); null for an operation without a token (the
   * public documents, and a public write whose credential is in its body).
   */
  readonly ability: RequiredAbility | null;
  /**
   * True when the operation works on team-wide data (tokens, activity, webhook endpoints and
   * deliveries, members, roles, groups): a token narrowed by `scope:project:<uuid>` gets
   * TOKEN_MISSING_ABILITY before any read (`authorizeOperation`).
   */
  readonly teamWide: boolean;
  readonly params?: Params;
  readonly query?: Query;
  readonly body?: Body;
  /** Success body; absent for the free-form public documents. */
  readonly output?: Output;
  /** Webhook events the operation can emit (documentation and tests). */
  readonly events: readonly WebhookEventName[];
  readonly rest: RestBinding;
  readonly tool?: ToolBinding;
  /**
   * `'exempt'`: the operation keeps working while the team is locked for non-payment (DESIGN D20) —
   * billing itself and the subscriber side (e.g. access-code redemption). Every other write is refused
   * with BILLING_LOCKED (402) on a locked team (`lockdownGuard`, joined to the request's first
   * transaction by `invokeOperation` on every surface). Reads are never locked.
   */
  readonly lockdown?: 'exempt';
  /**
   * The tier limit a create counts against (DESIGN D20): beyond it the operation answers
   * TIER_LIMIT_REACHED (402). Documentation (OpenAPI); the repository enforces it with the counter.
   */
  readonly tierLimit?: UsageMetric;
  /**
   * True when the operation calls a payment provider or platform before answering (DESIGN D22), so it
   * may answer PROVIDER_UNAVAILABLE (502) with nothing changed. Documentation (OpenAPI).
   */
  readonly callsProvider?: boolean;
  /**
   * True when the operation seals a new secret of its own with the credentials key (a webhook endpoint's
   * signing secret, DESIGN D8, D16), so its function may make data keys (`credentialKeyUse`, `lib/`).
   */
  readonly sealsSecret?: boolean;
  /**
   * True when the operation sends e-mail itself rather than through the job queue (an invitation, DESIGN D19, D32),
   * so its function gets the SES sender (`MAIL_FROM` and `ses:SendEmail`, `lib/mail.ts`).
   */
  readonly sendsEmail?: boolean;
  /**
   * How the operation takes `Idempotency-Key` (D3, `IdempotencyMode`): absent = claim first (duplicate → 409);
   * `'in-transaction'` only for a single unit of work: the transaction stores the record, and a concurrent duplicate
   * replays the first response.
   */
  readonly idempotency?: 'in-transaction';
  /**
   * The per-client-IP bucket every call counts in, on every surface, before anything else (DESIGN D4): a public
   * write whose credential is in its body (accepting an invitation), so guessing credentials is throttled.
   */
  readonly perIpLimit?: RateLimitBucket;
}

/**
 * An internal operation (DESIGN D13, D35): a state change of a surface without a REST route or tool (portal
 * actions, OAuth consent and token issuance, bot commands), declared in its object's folder and run by the same
 * pipeline (`invokeOperation`: authorization, idempotency, billing lockdown, activity). It never appears in routes,
 * CDK, `openapi.json`, `tools/list` or the catalogue counts. Its answer's status is 200.
 */
interface InternalOperationDefinition extends Omit<OperationDefinition, 'rest' | 'tool' | 'tierLimit' | 'sealsSecret'> {
  readonly internal: true;
  /** False for an internal read; every internal operation so far changes state. */
  readonly write: boolean;
}

/** Any internal operation definition. */
export type AnyInternalOperation = InternalOperationDefinition;

/** What `invokeOperation` runs: a routed operation or an internal one. */
export type PipelineOperation = AnyOperation | AnyInternalOperation;

/** True for operations that change state (a REST method other than GET; an internal write): idempotent writes (D3). */
export function isWrite(
  operation: Pick<AnyOperation, 'rest'> | Pick<AnyInternalOperation, 'internal' | 'write'>,
): boolean {
  return 'internal' in operation ? operation.write : operation.rest.method !== 'GET';
}

/** The HTTP status of an operation's success: its REST binding's, 200 for an internal operation. */
export function successStatusOf(operation: PipelineOperation): number {
  return 'internal' in operation ? 200 : operation.rest.successStatus;
}

/** Any operation definition. */
export type AnyOperation = OperationDefinition<z.ZodMiniObject, z.ZodMiniObject, z.ZodMiniObject, z.ZodMiniType>;

type Part<Op, K extends 'params' | 'query' | 'body'> = Op extends { readonly [P in K]: infer S extends z.ZodMiniType }
  ? z.output<S>
  : Record<never, never>;

/** The validated input of an operation: path parameters, query and body as one object. */
export type OperationInput<Op> = Part<Op, 'params'> & Part<Op, 'query'> & Part<Op, 'body'>;

/** What an operation's handler returns: the `output` schema's input type (the edge serializes it as JSON). */
export type OperationOutput<Op> = Op extends { output: infer O extends z.ZodMiniType } ? z.input<O> : unknown;

/**
 * Declares one operation, keeping its literal types (so handler inputs are inferred from the schemas).
 * `defineOperation` does nothing at run time but return its argument.
 */
export function defineOperation<
  const Op extends {
    id: string;
    summary: string;
    tag: string;
    ability: RequiredAbility | null;
    teamWide: boolean;
    params?: z.ZodMiniObject;
    query?: z.ZodMiniObject;
    body?: z.ZodMiniObject;
    output?: z.ZodMiniType;
    events: readonly WebhookEventName[];
    rest: RestBinding;
    tool?: ToolBinding;
    lockdown?: 'exempt';
    tierLimit?: UsageMetric;
    callsProvider?: boolean;
    sealsSecret?: boolean;
    idempotency?: 'in-transaction';
    perIpLimit?: RateLimitBucket;
  },
>(operation: Op): Op {
  return operation;
}

/**
 * Declares one internal operation ({@link AnyInternalOperation}), keeping its literal types. Does nothing at run
 * time but return its argument with `internal: true`.
 */
export function defineInternalOperation<
  const Op extends {
    id: string;
    summary: string;
    tag: string;
    ability: RequiredAbility | null;
    teamWide: boolean;
    params?: z.ZodMiniObject;
    query?: z.ZodMiniObject;
    body?: z.ZodMiniObject;
    output?: z.ZodMiniType;
    events: readonly WebhookEventName[];
    write: boolean;
    lockdown?: 'exempt';
    callsProvider?: boolean;
    idempotency?: 'in-transaction';
    perIpLimit?: RateLimitBucket;
  },
>(operation: Op): Op & { readonly internal: true } {
  return { ...operation, internal: true };
}

/** An object module (DESIGN §2): its folder under `shared/domain/`, its operations and its internal operations. */
export interface OperationModule {
  /** Folder name under `shared/domain/`, e.g. `projects`; its `handlers.ts` binds the handlers. */
  readonly folder: string;
  readonly operations: Readonly<Record<string, AnyOperation>>;
  /** Operations without a route or tool ({@link defineInternalOperation}); its `internal-handlers.ts` binds them. */
  readonly internal?: Readonly<Record<string, AnyInternalOperation>>;
}

/** Declares an object module (identity at run time; keeps literal types). */
export function defineModule<const M extends OperationModule>(module: M): M {
  return module;
}
