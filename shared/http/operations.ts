import type { z } from 'zod';
import type { Principal } from '../auth/tokens.js';
import { listTokens, mintToken, revokeToken } from '../auth/tokens.js';
import { listActivity } from '../activity.js';
import { webhookEventsDocument } from '../catalogues/resources.js';
import { createProject, getProject, listProjects } from '../projects.js';
import type { Runtime } from '../runtime.js';
import { getTeam } from '../teams.js';
import { createWebhookEndpoint, deleteWebhookEndpoint, getWebhookEndpoint, listWebhookEndpoints, rotateWebhookEndpointSecret, updateWebhookEndpoint } from '../webhooks/endpoints.js';
import { getDelivery, listDeliveries, replayDeadDeliveries, retryDelivery, sendTestEvent } from '../webhooks/deliveries.js';
import { openApiDocument } from './openapi.js';
import type { OperationId } from './route-table.js';
import type { CreateProjectRequest, CreateTokenRequest, CreateWebhookEndpointRequest, UpdateWebhookEndpointRequest } from '../schemas/resources.js';

/** What an operation receives after the pipeline authenticated and validated the request. */
export interface OperationRequest {
  runtime: Runtime;
  /** Null only for the public documents (`ability: null`). */
  principal: Principal | null;
  /** Validated path parameters, query and body (per the route's zod schemas). */
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/** An operation implementation: returns the JSON body of its success response. */
export type Operation = (request: OperationRequest) => Promise<unknown>;

const who = (request: OperationRequest): Principal => {
  if (!request.principal) throw new Error('operation needs an authenticated principal');
  return request.principal;
};
const page = (query: Record<string, unknown>) => ({ limit: query.limit as number, cursor: query.cursor as string | undefined });

/**
 * The implementation of every operation of the route table, by operation id. Each is a thin call
 * into the domain; the route table (`route-table.ts`) holds the metadata and schemas. Authorization
 * (ability and token scope) is done once by the REST pipeline before these run; `createToken` is open
 * to project-scoped tokens, which mint only within their own abilities and projects (`mintToken`).
 */
export const OPERATIONS: Record<OperationId, Operation> = {
  getCurrentTeam: async (request) => who(request).team ?? getTeam(request.runtime.store, who(request).teamId),
  listActivity: async (request) => listActivity(request.runtime.store, who(request).teamId, request.query as Parameters<typeof listActivity>[2]),
  createProject: async (request) => createProject(request.runtime, who(request), request.body as z.infer<typeof CreateProjectRequest>),
  listProjects: async (request) => listProjects(request.runtime, who(request), page(request.query)),
  getProject: async (request) => getProject(request.runtime, who(request), request.params.id),
  createWebhookEndpoint: async (request) => createWebhookEndpoint(request.runtime, who(request), request.body as z.infer<typeof CreateWebhookEndpointRequest> as never),
  listWebhookEndpoints: async (request) => listWebhookEndpoints(request.runtime, who(request), page(request.query)),
  getWebhookEndpoint: async (request) => getWebhookEndpoint(request.runtime, who(request), request.params.id),
  updateWebhookEndpoint: async (request) => updateWebhookEndpoint(request.runtime, who(request), request.params.id, request.body as z.infer<typeof UpdateWebhookEndpointRequest> as never),
  deleteWebhookEndpoint: async (request) => deleteWebhookEndpoint(request.runtime, who(request), request.params.id),
  rotateWebhookEndpointSecret: async (request) => rotateWebhookEndpointSecret(request.runtime, who(request), request.params.id, 'api'),
  sendTestWebhookEvent: async (request) => sendTestEvent(request.runtime, who(request), request.params.id),
  listWebhookDeliveries: async (request) => listDeliveries(request.runtime, who(request), request.query as Parameters<typeof listDeliveries>[2]),
  getWebhookDelivery: async (request) => getDelivery(request.runtime, who(request), request.params.id),
  retryWebhookDelivery: async (request) => retryDelivery(request.runtime, who(request), request.params.id),
  replayDeadWebhookDeliveries: async (request) => replayDeadDeliveries(request.runtime, who(request), (request.body as { since_hours: number }).since_hours),
  createToken: async (request) => {
    const principal = who(request);
    const body = request.body as z.infer<typeof CreateTokenRequest>;
    const { team_id: _team, ...token } = await mintToken(request.runtime.store, request.runtime.clock, {
      teamId: principal.teamId,
      team: principal.team ?? undefined,
      abilities: body.abilities,
      projectIds: body.project_ids,
      name: body.name ?? null,
      issuer: principal,
    });
    return token;
  },
  listTokens: async (request) => {
    const result = await listTokens(request.runtime.store, who(request).teamId, page(request.query));
    return { data: result.data.map(({ team_id: _team, ...token }) => token), next_cursor: result.next_cursor };
  },
  revokeToken: async (request) => {
    const { team_id: _team, ...token } = await revokeToken(request.runtime.store, request.runtime.clock, who(request).teamId, request.params.id);
    return token;
  },
  getOpenApiDocument: async () => openApiDocument(),
  getWebhookEventsDocument: async () => webhookEventsDocument(),
};
