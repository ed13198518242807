import { ABILITY_HOLDERS, ABILITY_VALUES, type Ability } from '../../catalogues/abilities.js';
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

/** A built-in role's abilities, in catalogue order: every ability for `owner`, else those whose facts name the role. */
function builtInAbilities(name: BuiltInRoleName): Ability[] {
  return ABILITY_VALUES.filter((ability) => name === 'owner' || (ABILITY_HOLDERS.get(ability) ?? []).includes(name));
}

const DESCRIPTIONS: Record<BuiltInRoleName, string> = {
  owner: 'Every ability, deleting the team included.',
  admin: 'Everything except deleting the team and changing its own billing.',
  developer: 'Builds on the API: projects, plans, tokens, webhooks and the activity log; reads everything else.',
  analyst: 'Reads everything (no subscriber contact details) and exports subscribers and the activity log.',
  support:
    'Helps subscribers: reads them with contact details, bans and kicks, manages subscriptions, access codes and refunds.',
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
  abilities: builtInAbilities(name),
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
