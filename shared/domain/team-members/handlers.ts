import type { HandlersOf } from '../../operations/handler.js';
import type { teamMembersModule } from './operations.js';

/** Every handler of the team members module. */
export const teamMembersHandlers = {} satisfies HandlersOf<typeof teamMembersModule>;
