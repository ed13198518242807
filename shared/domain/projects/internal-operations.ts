import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import { Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { MAX_BOT_PERMISSIONS, Project } from './schema.js';

/**
 * What a project's platform reports about its bot (DESIGN D22, D35): internal operations of the hook's principal
 * (surface `hook`), exempt from the billing lockdown (the platform changed already, D20).
 */
export const projectsInternalOperations = {
  recordBotPermissions: defineInternalOperation({
    id: 'recordBotPermissions',
    summary: 'Record the permissions the project’s bot holds in a chat, as the platform reported them.',
    tag: 'Projects',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({
      project_id: Uuid,
      permissions: z.array(z.string().check(z.minLength(1), z.maxLength(64))).check(z.maxLength(MAX_BOT_PERMISSIONS)),
    }),
    output: Project,
    events: ['project.bot_permissions_changed'],
    write: true,
    lockdown: 'exempt',
  }),
};
