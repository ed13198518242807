import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import { Project, ProjectBot, ProjectResource } from './schema.js';

const projectData = z.object({ project: Project });
const projectBotData = z.object({ project: Project, bot: ProjectBot });
const projectResourceData = z.object({ project: Project, resource: ProjectResource });
const projectProviderData = z.object({ project: Project, payment_provider: z.enum(PAYMENT_PROVIDER_VALUES) });

/** Projects' webhook events (`project.*`): lifecycle, bot connection, resource link and unlink, payment providers. */
export const projectsEvents = [
  defineEvent('project.created', 'project:view', true, projectData, 'A project was created.'),
  defineEvent(
    'project.updated',
    'project:view',
    true,
    projectData,
    'A project\u2019s name, description or settings changed.',
  ),
  defineEvent('project.archived', 'project:view', true, projectData, 'A project was archived.'),
  defineEvent('project.unarchived', 'project:view', true, projectData, 'An archived project was restored.'),
  defineEvent('project.deleted', 'project:view', true, projectData, 'A project was deleted.'),
  defineEvent(
    'project.bot_connected',
    'project:view',
    true,
    projectBotData,
    'A community bot was connected to the project.',
  ),
  defineEvent(
    'project.bot_disconnected',
    'project:view',
    true,
    projectBotData,
    'The project\u2019s community bot was disconnected or lost access.',
  ),
  defineEvent(
    'project.bot_permissions_changed',
    'project:view',
    true,
    projectBotData,
    'The permissions of the project\u2019s bot on the platform changed.',
  ),
  defineEvent(
    'project.resource_linked',
    'project:view',
    true,
    projectResourceData,
    'A platform resource (channel, group, server, role…) was linked to the project.',
  ),
  defineEvent(
    'project.resource_unlinked',
    'project:view',
    true,
    projectResourceData,
    'A platform resource was unlinked from the project.',
  ),
  defineEvent(
    'project.payment_provider_connected',
    'project:view',
    true,
    projectProviderData,
    'A payment provider was connected to the project.',
  ),
  defineEvent(
    'project.payment_provider_disconnected',
    'project:view',
    true,
    projectProviderData,
    'A payment provider was disconnected from the project.',
  ),
] as const;
