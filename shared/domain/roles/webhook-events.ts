import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { Role } from './schema.js';

const roleData = z.object({ role: Role });

/** Roles' webhook events (`role.*`). */
export const rolesEvents = [
  defineEvent('role.created', 'role:view', false, roleData, 'A role was created.'),
  defineEvent(
    'role.updated',
    'role:view',
    false,
    roleData,
    'A role\u2019s name, description, abilities or project scope changed.',
  ),
  defineEvent('role.deleted', 'role:view', false, roleData, 'A role was deleted.'),
] as const;
