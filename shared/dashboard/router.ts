import { randomUUID } from 'node:crypto';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { memberPrincipal } from '../auth/principal.js';
import { memberAbilities } from '../domain/team-members/abilities.js';
import { findMember } from '../domain/team-members/records.js';
import { findTeam } from '../domain/teams/repository.js';
import { ProblemError, toProblem } from '../errors.js';
import type { ApiGatewayResult } from '../http/api-gateway.js';
import { logger } from '../logger.js';
import type { Runtime } from '../runtime.js';
import { assetNamed } from './assets.js';
import {
  assetResult,
  clearedSessionCookie,
  decodeRequest,
  hasDoubleSubmitToken,
  hasValidCsrfToken,
  isCrossSiteRequest,
  jsonResult,
  PRESESSION_CSRF_COOKIE,
  redirectResult,
  safeReturnPath,
  SESSION_COOKIE,
  type DashboardRequest,
  type SignedInRequest,
} from './http.js';
import * as accessCodes from './pages/access-codes.js';
import * as activity from './pages/activity.js';
import * as billing from './pages/billing.js';
import * as changePlan from './pages/change-plan.js';
import * as groups from './pages/groups.js';
import * as home from './pages/home.js';
import * as oauth from './pages/oauth.js';
import * as plans from './pages/plans.js';
import * as projectConnections from './pages/project-connections.js';
import * as projectLifecycle from './pages/project-lifecycle.js';
import * as projectSettings from './pages/project-settings.js';
import * as projects from './pages/projects.js';
import * as roles from './pages/roles.js';
import * as signIn from './pages/sign-in.js';
import * as subscribers from './pages/subscribers.js';
import * as subscriptions from './pages/subscriptions.js';
import * as teamMembers from './pages/team-members.js';
import * as tokens from './pages/tokens.js';
import * as webhookDeliveries from './pages/webhook-deliveries.js';
import * as webhookEndpoint from './pages/webhook-endpoint.js';
import * as webhooks from './pages/webhooks.js';
import { findSession } from './sessions.js';

/**
 * The dashboard's routes (DESIGN D21), all under `/dashboard`: public ones (sign-in, sign-in links,
 * invitations, static files, the passkey sign-in ceremony) and signed-in ones, which need a live session
 * cookie, an active member and — for every POST — the session's CSRF token. A session started from a
 * sign-in link may only register a passkey (and sign out) until it has one.
 */

type Handler<R> = (request: R, params: Record<string, string>) => Promise<ApiGatewayResult>;
type Route =
  | { method: 'GET' | 'POST'; pattern: RegExp; access: 'public'; handler: Handler<DashboardRequest> }
  | {
      method: 'GET' | 'POST';
      pattern: RegExp;
      access: 'signed-in' | 'registration';
      handler: Handler<SignedInRequest>;
    };

const ID = '([A-Za-z0-9_-]{1,80})';
const route = (method: 'GET' | 'POST', path: string) =>
  new RegExp(`^/dashboard${path.replaceAll(':id', ID).replaceAll(':sub', ID)}/?$`);
/** A handler of a page under a project (`:id`) and one of its objects (`:sub`), given as `{ id, [name]: sub }`. */
const nested =
  (
    name: string,
    handler: (request: SignedInRequest, params: Record<string, string>) => Promise<ApiGatewayResult>,
  ): Handler<SignedInRequest> =>
  (request, params) =>
    handler(request, { id: params[1], [name]: params[2] });
/** A handler of a page of one object (`:id`), given as `{ id }`. */
const byId =
  (
    handler: (request: SignedInRequest, params: Record<string, string>) => Promise<ApiGatewayResult>,
  ): Handler<SignedInRequest> =>
  (request, params) =>
    handler(request, { id: params[1] });

const ROUTES: Route[] = [
  { method: 'GET', pattern: route('GET', '/sign-in'), access: 'public', handler: signIn.signInPage },
  { method: 'GET', pattern: route('GET', '/sign-in/link'), access: 'public', handler: signIn.signInLinkPage },
  { method: 'POST', pattern: route('POST', '/sign-in/link'), access: 'public', handler: signIn.useSignInLink },
  {
    method: 'POST',
    pattern: route('POST', '/sign-in/passkey-options'),
    access: 'public',
    handler: signIn.passkeySignInOptions,
  },
  { method: 'POST', pattern: route('POST', '/sign-in/passkey'), access: 'public', handler: signIn.passkeySignIn },
  { method: 'GET', pattern: route('GET', '/invitations/accept'), access: 'public', handler: signIn.invitationPage },
  { method: 'POST', pattern: route('POST', '/invitations/accept'), access: 'public', handler: signIn.acceptInvitation },

  {
    method: 'GET',
    pattern: route('GET', '/passkeys/new'),
    access: 'registration',
    handler: signIn.registerPasskeyPage,
  },
  {
    method: 'POST',
    pattern: route('POST', '/passkeys/registration-options'),
    access: 'registration',
    handler: signIn.passkeyRegistrationOptions,
  },
  {
    method: 'POST',
    pattern: route('POST', '/passkeys/register'),
    access: 'registration',
    handler: signIn.passkeyRegister,
  },
  { method: 'POST', pattern: route('POST', '/sign-out'), access: 'registration', handler: signIn.signOut },

  { method: 'GET', pattern: route('GET', ''), access: 'signed-in', handler: home.homePage },
  { method: 'GET', pattern: route('GET', '/account'), access: 'signed-in', handler: signIn.accountPage },
  {
    method: 'POST',
    pattern: route('POST', '/account/sessions/:id/revoke'),
    access: 'signed-in',
    handler: (request, params) => signIn.revokeOwnSession(request, { id: params[1] }),
  },

  { method: 'GET', pattern: route('GET', '/webhooks'), access: 'signed-in', handler: webhooks.endpointsPage },
  { method: 'GET', pattern: route('GET', '/webhooks/new'), access: 'signed-in', handler: webhooks.newEndpointPage },
  { method: 'POST', pattern: route('POST', '/webhooks'), access: 'signed-in', handler: webhooks.createEndpoint },
  {
    method: 'GET',
    pattern: route('GET', '/webhooks/endpoints/:id'),
    access: 'signed-in',
    handler: (request, params) => webhookEndpoint.endpointPage(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/webhooks/endpoints/:id/test'),
    access: 'signed-in',
    handler: (request, params) => webhookEndpoint.sendTest(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/webhooks/endpoints/:id/rotate-secret'),
    access: 'signed-in',
    handler: (request, params) => webhookEndpoint.rotateSecret(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/webhooks/endpoints/:id/enable'),
    access: 'signed-in',
    handler: (request, params) => webhookEndpoint.setActive(true)(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/webhooks/endpoints/:id/disable'),
    access: 'signed-in',
    handler: (request, params) => webhookEndpoint.setActive(false)(request, { id: params[1] }),
  },
  {
    method: 'GET',
    pattern: route('GET', '/webhooks/endpoints/:id/delete'),
    access: 'signed-in',
    handler: (request, params) => webhookEndpoint.confirmDeleteEndpoint(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/webhooks/endpoints/:id/delete'),
    access: 'signed-in',
    handler: (request, params) => webhookEndpoint.deleteEndpoint(request, { id: params[1] }),
  },
  {
    method: 'GET',
    pattern: route('GET', '/webhooks/deliveries'),
    access: 'signed-in',
    handler: webhookDeliveries.deliveriesPage,
  },
  {
    method: 'GET',
    pattern: route('GET', '/webhooks/deliveries/:id'),
    access: 'signed-in',
    handler: (request, params) => webhookDeliveries.deliveryPage(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/webhooks/deliveries/:id/retry'),
    access: 'signed-in',
    handler: (request, params) => webhookDeliveries.retryDelivery(request, { id: params[1] }),
  },
  {
    method: 'GET',
    pattern: route('GET', '/webhooks/replay-dead'),
    access: 'signed-in',
    handler: webhookDeliveries.confirmReplayDead,
  },
  {
    method: 'POST',
    pattern: route('POST', '/webhooks/replay-dead'),
    access: 'signed-in',
    handler: webhookDeliveries.replayDead,
  },

  { method: 'GET', pattern: route('GET', '/oauth/authorize'), access: 'signed-in', handler: oauth.consentPage },
  { method: 'POST', pattern: route('POST', '/oauth/authorize'), access: 'signed-in', handler: oauth.answerConsent },

  { method: 'GET', pattern: route('GET', '/tokens'), access: 'signed-in', handler: tokens.tokensPage },
  { method: 'GET', pattern: route('GET', '/tokens/new'), access: 'signed-in', handler: tokens.newTokenPage },
  { method: 'POST', pattern: route('POST', '/tokens'), access: 'signed-in', handler: tokens.createToken },
  {
    method: 'GET',
    pattern: route('GET', '/tokens/:id/revoke'),
    access: 'signed-in',
    handler: (request, params) => tokens.confirmRevokeToken(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/tokens/:id/revoke'),
    access: 'signed-in',
    handler: (request, params) => tokens.revokeToken(request, { id: params[1] }),
  },

  { method: 'GET', pattern: route('GET', '/projects'), access: 'signed-in', handler: projects.projectsPage },
  {
    method: 'GET',
    pattern: route('GET', '/projects/new'),
    access: 'signed-in',
    handler: (request) => projectLifecycle.newProjectPage(request),
  },
  { method: 'POST', pattern: route('POST', '/projects'), access: 'signed-in', handler: projectLifecycle.createProject },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id'),
    access: 'signed-in',
    handler: (request, params) => projects.projectPage(request, { id: params[1] }),
  },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/settings'),
    access: 'signed-in',
    handler: byId(projectSettings.settingsPage),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/settings'),
    access: 'signed-in',
    handler: byId(projectLifecycle.updateProject),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/archive'),
    access: 'signed-in',
    handler: byId(projectLifecycle.archiveAction('archive')),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/unarchive'),
    access: 'signed-in',
    handler: byId(projectLifecycle.archiveAction('unarchive')),
  },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/delete'),
    access: 'signed-in',
    handler: byId(projectLifecycle.confirmDeleteProject),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/delete'),
    access: 'signed-in',
    handler: byId(projectLifecycle.deleteProject),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/bot'),
    access: 'signed-in',
    handler: byId(projectConnections.connectBot),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/bot/disconnect'),
    access: 'signed-in',
    handler: byId(projectConnections.disconnectBot),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/payment-provider'),
    access: 'signed-in',
    handler: byId(projectConnections.connectProvider),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/payment-provider/disconnect'),
    access: 'signed-in',
    handler: byId(projectConnections.disconnectProvider),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/resources'),
    access: 'signed-in',
    handler: byId(projectConnections.linkResource),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/resources/:sub/unlink'),
    access: 'signed-in',
    handler: nested('resource', projectConnections.unlinkResource),
  },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/plans/new'),
    access: 'signed-in',
    handler: byId(plans.newPlanPage),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/plans'),
    access: 'signed-in',
    handler: byId(plans.createPlan),
  },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/plans/:sub'),
    access: 'signed-in',
    handler: nested('plan', plans.planPage),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/plans/:sub'),
    access: 'signed-in',
    handler: nested('plan', plans.updatePlan),
  },
  ...(['activate', 'deactivate', 'sync'] as const).map((action): Route => ({
    method: 'POST',
    pattern: route('POST', `/projects/:id/plans/:sub/${action}`),
    access: 'signed-in',
    handler: nested('plan', plans.planAction(action)),
  })),
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/subscribers'),
    access: 'signed-in',
    handler: (request, params) => subscribers.subscribersPage(request, { id: params[1] }),
  },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/subscribers/:sub'),
    access: 'signed-in',
    handler: nested('subscriber', subscribers.subscriberPage),
  },
  ...(['ban', 'unban', 'kick'] as const).map((action): Route => ({
    method: 'POST',
    pattern: route('POST', `/projects/:id/subscribers/:sub/${action}`),
    access: 'signed-in',
    handler: nested('subscriber', subscribers.moderateSubscriber(action)),
  })),
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/subscribers/:sub/grant'),
    access: 'signed-in',
    handler: nested('subscriber', subscribers.grantSubscription),
  },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/subscriptions'),
    access: 'signed-in',
    handler: (request, params) => subscriptions.subscriptionsPage(request, { id: params[1] }),
  },
  ...subscriptions.SUBSCRIPTION_ACTIONS.map((action): Route => ({
    method: 'POST',
    pattern: route('POST', `/projects/:id/subscriptions/:sub/${action}`),
    access: 'signed-in',
    handler: nested('subscription', subscriptions.subscriptionAction(action)),
  })),
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/subscriptions/:sub/change-plan'),
    access: 'signed-in',
    handler: nested('subscription', changePlan.changePlanPage),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/subscriptions/:sub/change-plan'),
    access: 'signed-in',
    handler: nested('subscription', changePlan.changePlan),
  },
  {
    method: 'GET',
    pattern: route('GET', '/projects/:id/access-codes'),
    access: 'signed-in',
    handler: (request, params) => accessCodes.accessCodesPage(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/access-codes'),
    access: 'signed-in',
    handler: (request, params) => accessCodes.generateCodes(request, { id: params[1] }),
  },
  {
    method: 'POST',
    pattern: route('POST', '/projects/:id/access-codes/:sub/revoke'),
    access: 'signed-in',
    handler: (request, params) => accessCodes.revokeCode(request, { id: params[1], code: params[2] }),
  },
  {
    method: 'GET',
    pattern: route('GET', '/team-members'),
    access: 'signed-in',
    handler: (request) => teamMembers.teamMembersPage(request),
  },
  { method: 'POST', pattern: route('POST', '/team-members'), access: 'signed-in', handler: teamMembers.inviteMember },
  {
    method: 'POST',
    pattern: route('POST', '/team-members/:id/remove'),
    access: 'signed-in',
    handler: (request, params) => teamMembers.removeMember(request, { id: params[1] }),
  },
  {
    method: 'GET',
    pattern: route('GET', '/team-members/:id'),
    access: 'signed-in',
    handler: byId(roles.teamMemberPage),
  },
  {
    method: 'POST',
    pattern: route('POST', '/team-members/:id'),
    access: 'signed-in',
    handler: byId(roles.updateTeamMemberRoles),
  },
  { method: 'GET', pattern: route('GET', '/roles'), access: 'signed-in', handler: roles.rolesPage },
  { method: 'GET', pattern: route('GET', '/roles/new'), access: 'signed-in', handler: roles.newRolePage },
  { method: 'POST', pattern: route('POST', '/roles'), access: 'signed-in', handler: roles.createRole },
  { method: 'GET', pattern: route('GET', '/roles/:id'), access: 'signed-in', handler: byId(roles.rolePage) },
  { method: 'POST', pattern: route('POST', '/roles/:id'), access: 'signed-in', handler: byId(roles.updateRole) },
  { method: 'POST', pattern: route('POST', '/roles/:id/delete'), access: 'signed-in', handler: byId(roles.deleteRole) },
  { method: 'GET', pattern: route('GET', '/groups/new'), access: 'signed-in', handler: groups.newGroupPage },
  { method: 'POST', pattern: route('POST', '/groups'), access: 'signed-in', handler: groups.createGroup },
  { method: 'GET', pattern: route('GET', '/groups/:id'), access: 'signed-in', handler: byId(groups.groupPage) },
  { method: 'POST', pattern: route('POST', '/groups/:id'), access: 'signed-in', handler: byId(groups.updateGroup) },
  {
    method: 'POST',
    pattern: route('POST', '/groups/:id/delete'),
    access: 'signed-in',
    handler: byId(groups.deleteGroup),
  },
  { method: 'GET', pattern: route('GET', '/billing'), access: 'signed-in', handler: billing.billingPage },
  { method: 'POST', pattern: route('POST', '/billing/tier'), access: 'signed-in', handler: billing.changeTier },
  { method: 'GET', pattern: route('GET', '/activity'), access: 'signed-in', handler: activity.activityPage },
];

/** The dashboard's forms posted before a session exists: they carry the pre-session double-submit token. */
const PRESESSION_FORMS: ReadonlySet<string> = new Set(['/dashboard/sign-in/link', '/dashboard/invitations/accept']);

/** The signed-in viewer of a request, or null (no, unknown, revoked or idle session; member no longer active; team deleted). */
async function signedIn(request: DashboardRequest): Promise<SignedInRequest | null> {
  const { store, clock } = request.runtime;
  const session = await findSession(store, clock, request.cookies[SESSION_COOKIE]);
  if (!session) return null;
  const [member, team] = await Promise.all([
    findMember(store, session.team_id, session.member_id),
    findTeam(store, session.team_id),
  ]);
  if (!member || member.status !== 'active' || !team || team.deleted_at) return null;
  const abilities = await memberAbilities(store, session.team_id, member);
  return {
    ...request,
    session,
    viewer: {
      principal: memberPrincipal({
        teamId: team.id,
        memberId: member.id,
        abilities: abilities.teamWide,
        team: { id: team.id, name: team.name, created_at: team.created_at },
      }),
      member: { id: member.id, name: member.name, email: member.email },
      team: { id: team.id, name: team.name },
      csrfToken: session.csrf_token,
    },
  };
}

/** The path and query of a GET dashboard request, to return to after sign-in, when it is a {@link safeReturnPath}. */
function signInReturnPath(request: DashboardRequest): string | null {
  const query = request.query.toString();
  return safeReturnPath(`${request.path}${query ? `?${query}` : ''}`);
}

function notFound(request: DashboardRequest): ApiGatewayResult {
  const { problem } = toProblem(
    new ProblemError('NOT_FOUND', `No dashboard page ${request.method} ${request.path}.`),
    request.requestId,
  );
  return request.headers.accept?.includes('application/json')
    ? jsonResult(404, problem)
    : {
        statusCode: 404,
        headers: { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store' },
        body: `${problem.detail}\n`,
      };
}

/**
 * Serves one dashboard request (the local server and the dashboard Lambda): static files, then the route
 * table. A signed-in route without a live session redirects to the sign-in page (JSON endpoints answer 401);
 * a POST without the session's CSRF token is refused with CSRF_TOKEN_INVALID (403) before anything runs.
 * Never throws: an unexpected failure is logged and answered 500 without details.
 */
export async function handleDashboardRequest(
  runtime: Runtime,
  event: APIGatewayProxyEventV2,
): Promise<ApiGatewayResult> {
  const requestId = event.requestContext?.requestId || randomUUID();
  const request = decodeRequest(runtime, event, requestId);
  try {
    const asset = /^\/dashboard\/assets\/([a-z0-9.-]+)$/.exec(request.path);
    if (asset && request.method === 'GET') {
      const file = assetNamed(asset[1]);
      return file ? assetResult(file.body, file.contentType) : notFound(request);
    }
    const found = ROUTES.map((candidate) => ({
      candidate,
      match: candidate.method === request.method ? candidate.pattern.exec(request.path) : null,
    })).find((entry) => entry.match);
    if (!found || !found.match) return notFound(request);
    const { candidate, match } = found;
    const params: Record<string, string> = Object.fromEntries(
      match.slice(1).map((value, index) => [String(index + 1), value]),
    );
    // No state change from another site, signed in or not (a login CSRF would sign the victim in as the attacker).
    if (
      request.method === 'POST' &&
      (isCrossSiteRequest(request) ||
        (PRESESSION_FORMS.has(request.path.replace(/\/$/, '')) &&
          !hasDoubleSubmitToken(request, PRESESSION_CSRF_COOKIE)))
    ) {
      const { problem } = toProblem(
        new ProblemError(
          'CSRF_TOKEN_INVALID',
          'This request did not come from this site’s own form; nothing was changed. Open the page again and resubmit.',
        ),
        requestId,
      );
      return jsonResult(403, problem);
    }
    if (candidate.access === 'public') return await candidate.handler(request, params);
    const wantsJson = request.headers['content-type']?.startsWith('application/json') ?? false;
    const viewer = await signedIn(request);
    if (!viewer) {
      if (wantsJson)
        return jsonResult(
          401,
          toProblem(new ProblemError('AUTHENTICATION_REQUIRED', 'Sign in to the dashboard first.'), requestId).problem,
          [clearedSessionCookie()],
        );
      // A page opened without a session (a bookmark, the OAuth consent page) comes back after sign-in.
      const returnTo = request.method === 'GET' ? signInReturnPath(request) : null;
      return redirectResult(
        `/dashboard/sign-in${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`,
        request.cookies[SESSION_COOKIE] ? [clearedSessionCookie()] : undefined,
      );
    }
    if (request.method === 'POST' && !hasValidCsrfToken(request, viewer.session)) {
      const { problem } = toProblem(
        new ProblemError(
          'CSRF_TOKEN_INVALID',
          'This request did not carry the CSRF token of your session; nothing was changed.',
        ),
        requestId,
      );
      return jsonResult(403, problem);
    }
    if (candidate.access === 'signed-in' && viewer.session.state === 'registration')
      return redirectResult('/dashboard/passkeys/new');
    return await candidate.handler(viewer, params);
  } catch (error) {
    logger.error('dashboard request failed', { request_id: requestId, path: request.path, error: error as Error });
    const { problem } = toProblem(error, requestId);
    return jsonResult(problem.status, problem);
  }
}

/** The dashboard Lambda's handler (DESIGN D21: its own Lambda behind the REST API at `/dashboard`). `getRuntime` is called per invocation. */
export function createDashboardHandler(getRuntime: () => Runtime) {
  return middy<APIGatewayProxyEventV2, ApiGatewayResult>().handler(async (event) =>
    handleDashboardRequest(getRuntime(), event),
  );
}
