import type { Ability } from '../catalogues/abilities.js';
import { ProblemError } from '../errors.js';
import { AUTHENTICATED, type RequiredAbility } from '../operations/definition.js';
import type { Principal } from './principal.js';

/**
 * The operations a subscriber acting in the portal may call (DESIGN D27), whatever their abilities allow
 * elsewhere (e.g. `project-subscription:view` also reads any subscriber's access): reads of its own
 * subscriber, subscriptions and payments, cancelling or resuming its own subscriptions, and the portal's internal
 * operations (payment method, Discord link, sign-out; DESIGN D35).
 */
const SUBSCRIBER_OPERATIONS: ReadonlySet<string> = new Set([
  'getSubscriber',
  'listSubscriptions',
  'getSubscription',
  'cancelSubscription',
  'resumeSubscription',
  'listPayments',
  'getPayment',
  'openBillingPortal',
  'signOutOfPortal',
  'startDiscordLink',
  'linkDiscordAccount',
]);

/**
 * What an operation (a REST route or a tool) declares about who may call it: the one ability it needs
 * ({@link AUTHENTICATED}: a valid token and no ability, DESIGN D2) and whether it works on team-wide data
 * (tokens, activity, webhook endpoints and deliveries, roles, groups, members) that a
 * `scope:project:<uuid>` token does not cover.
 */
export interface OperationAccess {
  /** The operation id (a subscriber principal may call only {@link SUBSCRIBER_OPERATIONS}). */
  id?: string;
  ability: RequiredAbility;
  /** True for operations over team-wide data; a project-scoped token is refused them. */
  teamWide: boolean;
}

/**
 * Throws TOKEN_MISSING_ABILITY (403) unless the principal holds `ability`
 * (interface "Tool-server authorization" 2, DESIGN D5).
 */
export function requireAbility(principal: Principal, ability: Ability): void {
  if (!principal.abilities.has(ability)) {
    throw new ProblemError('TOKEN_MISSING_ABILITY', `This token lacks the ability \`${ability}\`.`);
  }
}

/**
 * The one authorization rule of every REST route and tool, run before input validation or any read (interface "Bearer
 * tokens" 3–5, "Tool-server authorization" 2): ability, then team-wide scope; both fail as TOKEN_MISSING_ABILITY (403),
 * from the token alone. Objects outside the scope are NOT_FOUND, decided by the domain.
 */
export function authorizeOperation(principal: Principal, access: OperationAccess): void {
  if (principal.subscriberId && !SUBSCRIBER_OPERATIONS.has(access.id ?? '')) {
    throw new ProblemError('TOKEN_MISSING_ABILITY', 'The subscriber portal may not use this operation.');
  }
  if (access.ability !== AUTHENTICATED) requireAbility(principal, access.ability);
  if (access.teamWide) requireTeamWideAccess(principal, 'data');
}

/**
 * True when a project-scoped token may touch `projectId` (interface "Bearer tokens" 4:
 * `scope:project:<uuid>` narrows access). Unscoped tokens may touch every project of their team.
 */
export function canAccessProject(principal: Principal, projectId: string): boolean {
  return principal.projectIds === null || principal.projectIds.includes(projectId);
}

/**
 * True when the principal may see data of subscriber `subscriberId` in `projectId` (DESIGN D27): the
 * project is in its scope ({@link canAccessProject}) and, for a subscriber acting in the portal, it is that
 * subscriber. The one rule of reads by id of subscribers, subscriptions and payments (NOT_FOUND otherwise).
 */
export function canAccessSubscriberData(principal: Principal, projectId: string, subscriberId: string): boolean {
  return canAccessProject(principal, projectId) && (!principal.subscriberId || principal.subscriberId === subscriberId);
}

/**
 * The subscriber a list of `projectId`'s subscriptions or payments is narrowed to (DESIGN D27): a portal
 * principal's own, whatever was asked; otherwise the query's (or none).
 */
export function listedSubscriber(principal: Principal, requested: string | undefined): string | undefined {
  return principal.subscriberId ?? requested;
}

/**
 * Throws NOT_FOUND (never 403, so nothing leaks about existence) when a project-scoped token
 * reaches for a project outside its scope.
 */
export function requireProjectAccess(principal: Principal, projectId: string): void {
  if (!canAccessProject(principal, projectId)) throw new ProblemError('NOT_FOUND', `No project ${projectId}.`);
}

/**
 * Throws TOKEN_MISSING_ABILITY (403) when a project-scoped token calls an operation over team-wide
 * data (tokens, activity, webhook endpoints and deliveries, members, roles, groups) that its
 * `scope:project:<uuid>` entries do not cover. Decided before any read, whatever the ids in the
 * request, so it reveals nothing about other objects; the same answer on REST and on the tool server.
 * `what` names the data in the detail.
 */
function requireTeamWideAccess(principal: Principal, what: string): void {
  if (principal.projectIds !== null) {
    throw new ProblemError(
      'TOKEN_MISSING_ABILITY',
      `This token is narrowed to projects (scope:project:<uuid>) and cannot use team-wide ${what}; use a token without project scopes.`,
    );
  }
}
