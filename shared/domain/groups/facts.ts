import { defineFacts } from '../define-facts.js';

/**
 * Groups' abilities and keys (DESIGN D14, D19): items in the team's partition, plus a claim item that keeps group names
 * unique per team.
 */
export const groupsFacts = defineFacts({
  abilities: {
    category: 'group',
    label: 'Groups',
    entries: [
      {
        value: 'group:view-any',
        description: 'List the groups of the team.',
        roles: ['developer', 'analyst', 'viewer'],
      },
      {
        value: 'group:view',
        description: 'Read one group and its members.',
        roles: ['developer', 'analyst', 'viewer'],
      },
      { value: 'group:create', description: 'Create a group.', roles: [] },
      { value: 'group:update', description: 'Change a group\u2019s name and description.', roles: [] },
      { value: 'group:delete', description: 'Delete a group.', roles: [] },
      { value: 'group:manage-members', description: 'Add members to a group or remove them.', roles: [] },
    ],
  },
  keys: {
    group: (teamId: string, groupId: string) => ({ pk: `TEAM#${teamId}`, sk: `GROUP#${groupId}` }),
    groupName: (teamId: string, normalizedName: string) => ({
      pk: `TEAM#${teamId}`,
      sk: `GROUP_NAME#${normalizedName}`,
    }),
  },
  sortKeyPrefix: { group: 'GROUP#' },
  entity: { group: 'group', groupName: 'group_name' },
});
