import { defineFacts } from '../define-facts.js';

/** Projects' abilities and keys (DESIGN D14): team-level items, `TEAM#<team>` / `PROJECT#<uuid>`. */
export const projectsFacts = defineFacts({
  abilities: {
    category: 'project',
    label: 'Projects',
    entries: [
      {
        value: 'project:view-any',
        description: 'List the projects of the team.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project:view',
        description: 'Read one project, its bot connection and linked resources.',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      { value: 'project:create', description: 'Create a project.', roles: ['developer'] },
      {
        value: 'project:update',
        description: 'Change a project\u2019s name, description and settings.',
        roles: ['developer'],
      },
      { value: 'project:delete', description: 'Delete a project.', roles: [] },
      { value: 'project:archive', description: 'Archive a project or restore an archived one.', roles: [] },
      {
        value: 'project:connect-bot',
        description: 'Connect or disconnect a project\u2019s community bot.',
        roles: ['developer'],
      },
      {
        value: 'project:link-resource',
        description: 'Link or unlink platform resources (channels, groups, servers) to a project.',
        roles: ['developer'],
      },
    ],
  },
  keys: {
    project: (teamId: string, projectId: string) => ({ pk: `TEAM#${teamId}`, sk: `PROJECT#${projectId}` }),
  },
  sortKeyPrefix: { project: 'PROJECT#' },
  entity: { project: 'project' },
});
