import type { HandlersOf } from '../../operations/handler.js';
import type { groupsModule } from './operations.js';

/** Every handler of the groups module. */
export const groupsHandlers = {} satisfies HandlersOf<typeof groupsModule>;
