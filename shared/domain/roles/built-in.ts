import { ABILITY_VALUES, type Ability } from '../../catalogues/abilities.js';
import { API_VERSION } from '../../catalogues/version.js';
import type { Role } from './schema.js';

/**
 * The six built-in roles every team has (DESIGN D19). They are constants merged into every read, not
 * items, so teams created before roles existed have them too, and they cannot be changed or deleted
 * (CONFLICT). Their ids are fixed UUIDs, the same in every team (a role id only ever resolves inside the
 * caller's team). Their timestamps are the API version's date: they change only with a new version.
 */

/** The names of the built-in roles, in the order lists show them. */
export const BUILT_IN_ROLE_NAMES = ['owner', 'admin', 'developer', 'analyst', 'support', 'viewer'] as const;
/** A built-in role name. */
export type BuiltInRoleName = (typeof BUILT_IN_ROLE_NAMES)[number];

const only = (...abilities: Ability[]): Ability[] => ABILITY_VALUES.filter((ability) => abilities.includes(ability));
const except = (...abilities: Ability[]): Ability[] => ABILITY_VALUES.filter((ability) => !abilities.includes(ability));
/** Every read ability (`:view-any` lists, `:view` reads one object) except subscriber contact details. */
const READS = ABILITY_VALUES.filter((ability) => /:view(-any)?$/.test(ability) && ability !== 'project-user:view');

const BUILT_IN_ABILITIES: Record<BuiltInRoleName, readonly Ability[]> = {
  owner: [...ABILITY_VALUES],
  admin: except('team:delete', 'billing:update'),
  developer: only(
    ...READS.filter((ability) => !ability.startsWith('billing')),
    'project:create', 'project:update', 'project:connect-bot', 'project:link-resource',
    'project-subscription-plan:create', 'project-subscription-plan:update', 'project-subscription-plan:sync',
    'token:create', 'token:revoke', 'webhook-endpoint:manage', 'webhook-delivery:retry', 'activity:read', 'mcp:full',
  ),
  analyst: only(...READS, 'project-user:export', 'activity:read', 'activity:export', 'mcp:full'),
  support: only(
    'team:view', 'project:view-any', 'project:view',
    'project-user:view-any', 'project-user:view', 'project-user:update', 'project-user:ban', 'project-user:kick',
    'project-subscription-plan:view-any', 'project-subscription-plan:view',
    'project-subscription:view-any', 'project-subscription:view', 'project-subscription:update', 'project-subscription:cancel', 'project-subscription:pause',
    'project-access-code:view-any', 'project-access-code:view', 'project-access-code:create', 'project-access-code:revoke',
    'project-payment:view-any', 'project-payment:view', 'project-payment:refund', 'mcp:full',
  ),
  viewer: only(...READS),
};

const DESCRIPTIONS: Record<BuiltInRoleName, string> = {
  owner: 'Every ability, deleting the team included.',
  admin: 'Everything except deleting the team and changing its own billing.',
  developer: 'Builds on the API: projects, plans, tokens, webhooks and the activity log; reads everything else.',
  analyst: 'Reads everything (no subscriber contact details) and exports subscribers and the activity log.',
  support: 'Helps subscribers: reads them with contact details, bans and kicks, manages subscriptions, access codes and refunds.',
  viewer: 'Reads everything except subscriber contact details; changes nothing.',
};

/** The fixed id of each built-in role (UUIDs of the `…-4000-a000-…` family, unlikely to collide with random ones). */
export const BUILT_IN_ROLE_IDS: Record<BuiltInRoleName, string> = {
  owner: '00000000-0000-4000-a000-000000000001',
  admin: '00000000-0000-4000-a000-000000000002',
  developer: '00000000-0000-4000-a000-000000000003',
  analyst: '00000000-0000-4000-a000-000000000004',
  support: '00000000-0000-4000-a000-000000000005',
  viewer: '00000000-0000-4000-a000-000000000006',
};

const CREATED_AT = `${API_VERSION}T00:00:00.000Z`;

/** The six built-in roles, in {@link BUILT_IN_ROLE_NAMES} order. */
export const BUILT_IN_ROLES: readonly Role[] = BUILT_IN_ROLE_NAMES.map((name) => ({
  id: BUILT_IN_ROLE_IDS[name],
  name,
  description: DESCRIPTIONS[name],
  built_in: true,
  abilities: [...BUILT_IN_ABILITIES[name]],
  project_ids: null,
  created_at: CREATED_AT,
  updated_at: CREATED_AT,
}));

const BY_ID: ReadonlyMap<string, Role> = new Map(BUILT_IN_ROLES.map((role) => [role.id, role]));

/** The built-in role with this id, or undefined for any other id. Returns a copy. */
export function builtInRole(roleId: string): Role | undefined {
  const role = BY_ID.get(roleId.toLowerCase());
  return role ? { ...role, abilities: [...role.abilities] } : undefined;
}

/** True when `roleId` is the id of a built-in role. */
export function isBuiltInRoleId(roleId: string): boolean {
  return BY_ID.has(roleId.toLowerCase());
}

/** True when `normalizedName` (see `normalizeName`) is a built-in role's name: custom roles cannot take it. */
export function isBuiltInRoleName(normalizedName: string): boolean {
  return (BUILT_IN_ROLE_NAMES as readonly string[]).includes(normalizedName);
}
