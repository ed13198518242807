import * as z from 'zod';
import { CREATE_PROJECT_PLATFORM_TYPES, PLATFORM_TYPE_VALUES } from '../../catalogues/platform-types.js';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/** Project statuses (a closed list, written once). */
export const PROJECT_STATUSES = ['active', 'archived'] as const;
/** A project status. */
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

/** A creator's project (one community on one platform), as the API returns it and events carry it. */
export const Project = z
  .object({
    id: Uuid,
    name: z.string(),
    platform_type: z.enum(PLATFORM_TYPE_VALUES),
    description: z.string().nullable(),
    status: z.enum(PROJECT_STATUSES),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Project' });
/** A project (see {@link Project}). */
export type Project = z.infer<typeof Project>;

/** A page of projects. */
export const ProjectList = listOf(Project, 'ProjectList');

/** `{project_id}` path parameters. */
export const ProjectIdParams = z.object({ project_id: Uuid.describe('The project id.') }).strict();

/** Body of `POST /v1/projects` (and the `create_project` tool's arguments). */
export const CreateProjectRequest = z
  .object({
    name: z.string().trim().min(1).max(100).describe('Project name, 1 to 100 characters.'),
    platform_type: z.enum(CREATE_PROJECT_PLATFORM_TYPES).describe('The community platform (see service://enums/platform-type, create_project_accepts).'),
    description: z.string().max(1000).optional().describe('Optional description, up to 1000 characters.'),
  })
  .strict()
  .meta({ id: 'CreateProjectRequest' });

/** Query of `GET /v1/projects` (and the `list_projects` tool's arguments). */
export const ListProjectsQuery = ListQuery.extend({
  status: z.enum(PROJECT_STATUSES).optional().describe('Only projects with this status.'),
}).strict();
