import { z } from 'zod';
import type { Ability } from '../catalogues/abilities.js';
import { EmptyBody, ListQuery, Problem, Uuid } from '../schemas/common.js';
import {
  ActivityList,
  ActivityQuery,
  CreateProjectRequest,
  CreateTokenRequest,
  CreateWebhookEndpointRequest,
  Project,
  ProjectList,
  Team,
  ReplayDeadRequest,
  Token,
  TokenList,
  TokenWithSecret,
  UpdateWebhookEndpointRequest,
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
} from '../schemas/resources.js';

/** HTTP methods the REST API uses. */
export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/**
 * One REST operation: the single source of truth for its method, path, ability and schemas.
 * It drives the CDK routes (one Lambda each), the local server's dispatch and `openapi.json`.
 * Metadata only — the implementation is bound by `operationId` in `shared/http/operations.ts`,
 * so `lib/` can import this module without pulling runtime code.
 */
export interface RouteDefinition {
  /** Unique, camelCase; also the Lambda's OPERATION_ID and the activity log's `operation`. */
  operationId: string;
  method: HttpMethod;
  /** API Gateway style path, e.g. `/v1/projects/{id}`. */
  path: string;
  summary: string;
  tag: string;
  /** The ability the token must hold (`x-required-scopes`); null for the two public documents. */
  ability: Ability | null;
  /**
   * True when the operation works on team-wide data (tokens, activity, webhook endpoints and
   * deliveries): a token narrowed by `scope:project:<uuid>` gets TOKEN_MISSING_ABILITY (see
   * `authorizeOperation` in `shared/auth/authorize.ts`). Absent: project-scoped tokens may call it and
   * see only their projects.
   */
  teamWide?: boolean;
  /** zod schema of the path parameters, if the path has any. */
  params?: z.ZodObject;
  /** zod schema of the query string. */
  query?: z.ZodObject;
  /** zod schema of the JSON body (writes only). */
  body?: z.ZodType;
  /** HTTP status of success. */
  successStatus: number;
  /** zod schema of the success body (omitted for free-form documents). */
  response?: z.ZodType;
}

const IdParams = z.object({ id: Uuid }).strict();
const DeliveryIdParams = z.object({ id: z.string().regex(/^dlv_[0-9A-HJKMNP-TV-Z]{26}$/) }).strict();
const TokenIdParams = z.object({ id: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/) }).strict();
const ReplayDeadResponse = z.object({ replayed: z.number().int() }).meta({ id: 'ReplayDeadResponse' });
const Deleted = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'Deleted' });
const DeliveryQuery = ListQuery.extend({
  endpoint_id: Uuid.optional(),
  status: z.enum(['pending', 'delivering', 'succeeded', 'dead']).optional(),
  event_type: z.string().max(100).optional(),
}).strict();

/** Every REST operation of the service (interface "Endpoints" plus the ones DESIGN adds). */
export const ROUTES = [
  { operationId: 'getCurrentTeam', method: 'GET', path: '/v1/teams/current', summary: 'The team the token is scoped to (smoke test).', tag: 'Teams', ability: 'team:view', successStatus: 200, response: Team },
  { operationId: 'listActivity', method: 'GET', path: '/v1/activity', summary: 'Activity log, newest first.', tag: 'Activity', ability: 'activity:read', teamWide: true, query: ActivityQuery, successStatus: 200, response: ActivityList },
  { operationId: 'createProject', method: 'POST', path: '/v1/projects', summary: 'Create a project (emits project.created).', tag: 'Projects', ability: 'project:create', body: CreateProjectRequest, successStatus: 201, response: Project },
  { operationId: 'listProjects', method: 'GET', path: '/v1/projects', summary: 'List projects.', tag: 'Projects', ability: 'project:view-any', query: ListQuery, successStatus: 200, response: ProjectList },
  { operationId: 'getProject', method: 'GET', path: '/v1/projects/{id}', summary: 'Get one project.', tag: 'Projects', ability: 'project:view', params: IdParams, successStatus: 200, response: Project },
  { operationId: 'createWebhookEndpoint', method: 'POST', path: '/v1/webhook-endpoints', summary: 'Register a webhook endpoint; returns its secret once.', tag: 'Webhooks', ability: 'webhook-endpoint:manage', teamWide: true, body: CreateWebhookEndpointRequest, successStatus: 201, response: WebhookEndpointWithSecret },
  { operationId: 'listWebhookEndpoints', method: 'GET', path: '/v1/webhook-endpoints', summary: 'List webhook endpoints.', tag: 'Webhooks', ability: 'webhook-endpoint:manage', teamWide: true, query: ListQuery, successStatus: 200, response: WebhookEndpointList },
  { operationId: 'getWebhookEndpoint', method: 'GET', path: '/v1/webhook-endpoints/{id}', summary: 'Get one webhook endpoint.', tag: 'Webhooks', ability: 'webhook-endpoint:manage', teamWide: true, params: IdParams, successStatus: 200, response: WebhookEndpoint },
  { operationId: 'updateWebhookEndpoint', method: 'POST', path: '/v1/webhook-endpoints/{id}', summary: 'Update a webhook endpoint; `is_active: true` re-enables it.', tag: 'Webhooks', ability: 'webhook-endpoint:manage', teamWide: true, params: IdParams, body: UpdateWebhookEndpointRequest, successStatus: 200, response: WebhookEndpoint },
  { operationId: 'deleteWebhookEndpoint', method: 'DELETE', path: '/v1/webhook-endpoints/{id}', summary: 'Delete a webhook endpoint.', tag: 'Webhooks', ability: 'webhook-endpoint:manage', teamWide: true, params: IdParams, successStatus: 200, response: Deleted },
  { operationId: 'rotateWebhookEndpointSecret', method: 'POST', path: '/v1/webhook-endpoints/{id}/rotate-secret', summary: 'Replace the signing secret at once (v1 only); the new secret is shown once.', tag: 'Webhooks', ability: 'webhook-endpoint:manage', teamWide: true, params: IdParams, body: EmptyBody, successStatus: 200, response: WebhookEndpointWithSecret },
  { operationId: 'sendTestWebhookEvent', method: 'POST', path: '/v1/webhook-endpoints/{id}/test', summary: 'Send a webhook_endpoint.test event to this endpoint.', tag: 'Webhooks', ability: 'webhook-endpoint:manage', teamWide: true, params: IdParams, body: EmptyBody, successStatus: 202, response: WebhookDelivery },
  { operationId: 'listWebhookDeliveries', method: 'GET', path: '/v1/webhook-deliveries', summary: 'List deliveries.', tag: 'Webhooks', ability: 'webhook-delivery:view-any', teamWide: true, query: DeliveryQuery, successStatus: 200, response: WebhookDeliveryList },
  { operationId: 'getWebhookDelivery', method: 'GET', path: '/v1/webhook-deliveries/{id}', summary: 'Get one delivery with its attempts.', tag: 'Webhooks', ability: 'webhook-delivery:view-any', teamWide: true, params: DeliveryIdParams, successStatus: 200, response: WebhookDelivery },
  { operationId: 'retryWebhookDelivery', method: 'POST', path: '/v1/webhook-deliveries/{id}/retry', summary: 'Re-queue one dead delivery (attempts reset to 0).', tag: 'Webhooks', ability: 'webhook-delivery:retry', teamWide: true, params: DeliveryIdParams, body: EmptyBody, successStatus: 202, response: WebhookDelivery },
  { operationId: 'replayDeadWebhookDeliveries', method: 'POST', path: '/v1/webhook-deliveries/replay-dead', summary: 'Re-queue dead deliveries dead-lettered within since_hours.', tag: 'Webhooks', ability: 'webhook-delivery:retry', teamWide: true, body: ReplayDeadRequest, successStatus: 202, response: ReplayDeadResponse },
  { operationId: 'createToken', method: 'POST', path: '/v1/tokens', summary: 'Mint a token within the caller’s own abilities and scopes; the secret is shown once.', tag: 'Tokens', ability: 'token:create', body: CreateTokenRequest, successStatus: 201, response: TokenWithSecret },
  { operationId: 'listTokens', method: 'GET', path: '/v1/tokens', summary: 'List the team’s tokens.', tag: 'Tokens', ability: 'token:view-any', teamWide: true, query: ListQuery, successStatus: 200, response: TokenList },
  { operationId: 'revokeToken', method: 'DELETE', path: '/v1/tokens/{id}', summary: 'Revoke a token; effective on its next call.', tag: 'Tokens', ability: 'token:revoke', teamWide: true, params: TokenIdParams, successStatus: 200, response: Token },
  { operationId: 'getOpenApiDocument', method: 'GET', path: '/openapi.json', summary: 'This API description (OpenAPI 3.1).', tag: 'Meta', ability: null, successStatus: 200 },
  { operationId: 'getWebhookEventsDocument', method: 'GET', path: '/webhook-events.json', summary: 'Every webhook event with its data schema.', tag: 'Meta', ability: null, successStatus: 200 },
] as const satisfies readonly RouteDefinition[];

/** Operation ids of {@link ROUTES}. */
export type OperationId = (typeof ROUTES)[number]['operationId'];

/** The error document schema, for `openapi.json`. */
export const PROBLEM_SCHEMA = Problem;

/** `GET /v1/projects/{id}` → `GET /v1/projects/{id}`: the API Gateway HTTP API route key. */
export function routeKey(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** Finds a route by operation id; throws if none (a programming error). */
export function routeByOperationId(operationId: string): RouteDefinition {
  const route = (ROUTES as readonly RouteDefinition[]).find((candidate) => candidate.operationId === operationId);
  if (!route) throw new Error(`Unknown operation ${operationId}`);
  return route;
}

/** Percent-decodes a path segment; null when it is not valid percent-encoding (the path matches no route). */
function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/**
 * Matches a method and concrete path against the route table (as API Gateway would).
 * Literal segments win over `{param}` segments. Returns the route and its path parameters,
 * `{ allowedMethods }` when the path exists under other methods (→ 405), or null (→ 404).
 */
export function matchRoute(
  method: string,
  path: string,
): { route: RouteDefinition; pathParameters: Record<string, string> } | { allowedMethods: HttpMethod[] } | null {
  const segments = path.split('/');
  const candidates: { route: RouteDefinition; pathParameters: Record<string, string>; literal: number }[] = [];
  for (const route of ROUTES as readonly RouteDefinition[]) {
    const pattern = route.path.split('/');
    if (pattern.length !== segments.length) continue;
    const pathParameters: Record<string, string> = {};
    let literal = 0;
    let matched = true;
    for (let index = 0; index < pattern.length; index++) {
      const part = pattern[index];
      if (part.startsWith('{') && part.endsWith('}')) {
        const value = segments[index] ? safeDecode(segments[index]) : null;
        if (value === null) { matched = false; break; }
        pathParameters[part.slice(1, -1)] = value;
      } else if (part === segments[index]) {
        literal++;
      } else {
        matched = false;
        break;
      }
    }
    if (matched) candidates.push({ route, pathParameters, literal });
  }
  if (candidates.length === 0) return null;
  const sameMethod = candidates.filter((candidate) => candidate.route.method === method);
  if (sameMethod.length > 0) {
    const best = sameMethod.reduce((a, b) => (b.literal > a.literal ? b : a));
    return { route: best.route, pathParameters: best.pathParameters };
  }
  const top = candidates;
  return { allowedMethods: [...new Set(top.map((candidate) => candidate.route.method))] };
}
