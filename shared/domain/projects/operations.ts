import { defineModule, defineOperation } from '../../operations/definition.js';
import { CreateProjectRequest, ListProjectsQuery, Project, ProjectIdParams, ProjectList } from './schema.js';

/** The project operations (DESIGN D13). */
export const projectsModule = defineModule({
  folder: 'projects',
  operations: {
    createProject: defineOperation({
      id: 'createProject',
      summary: 'Create a project on a community platform (emits project.created).',
      tag: 'Projects',
      ability: 'project:create',
      teamWide: false,
      body: CreateProjectRequest,
      output: Project,
      events: ['project.created'],
      rest: { method: 'POST', path: '/v1/projects', successStatus: 201 },
      tool: { name: 'create_project', title: 'Create project', kind: 'create', description: 'Create a project on a community platform.' },
    }),
    listProjects: defineOperation({
      id: 'listProjects',
      summary: 'List the team’s projects.',
      tag: 'Projects',
      ability: 'project:view-any',
      teamWide: false,
      query: ListProjectsQuery,
      output: ProjectList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects', successStatus: 200 },
      tool: { name: 'list_projects', title: 'List projects', kind: 'read' },
    }),
    getProject: defineOperation({
      id: 'getProject',
      summary: 'Read one project.',
      tag: 'Projects',
      ability: 'project:view',
      teamWide: false,
      params: ProjectIdParams,
      output: Project,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}', successStatus: 200 },
      tool: { name: 'get_project', title: 'Get project', kind: 'read' },
    }),
  },
});
