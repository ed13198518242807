import { defineFacts } from '../define-facts.js';

/**
 * Roles' abilities and keys (DESIGN D14, D19): items in the team's partition, plus a claim item that keeps role names
 * unique per team.
 */
export const rolesFacts = defineFacts({
  abilities: {
    category: 'role',
    label: 'Roles',
    entries: [
      { value: 'role:view-any', description: 'List the roles of the team.', roles: ['developer', 'analyst', 'viewer'] },
      {
        value: 'role:view',
        description: 'Read one role and its abilities.',
        roles: ['developer', 'analyst', 'viewer'],
      },
      { value: 'role:create', description: 'Create a role (never with abilities the caller lacks).', roles: [] },
      {
        value: 'role:update',
        description: 'Change a role\u2019s name and abilities (never beyond the caller\u2019s own).',
        roles: [],
      },
      { value: 'role:delete', description: 'Delete a role that no member holds.', roles: [] },
      { value: 'role:assign', description: 'Assign a role to a team member.', roles: [] },
    ],
  },
  keys: {
    role: (teamId: string, roleId: string) => ({ pk: `TEAM#${teamId}`, sk: `ROLE#${roleId}` }),
    roleName: (teamId: string, normalizedName: string) => ({ pk: `TEAM#${teamId}`, sk: `ROLE_NAME#${normalizedName}` }),
  },
  sortKeyPrefix: { role: 'ROLE#' },
  entity: { role: 'role', roleName: 'role_name' },
});
