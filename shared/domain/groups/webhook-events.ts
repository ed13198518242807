import * as z from '../../schemas/zod.js';
import { defineEvent } from '../define-facts.js';
import { Group } from './schema.js';

const groupData = z.object({ group: Group });

/** Groups' webhook events (`group.*`). */
export const groupsEvents = [
  defineEvent('group.created', 'group:view', false, groupData, 'A group was created.'),
  defineEvent(
    'group.updated',
    'group:view',
    false,
    groupData,
    'A group\u2019s name, description, roles or members changed.',
  ),
  defineEvent('group.deleted', 'group:view', false, groupData, 'A group was deleted.'),
] as const;
