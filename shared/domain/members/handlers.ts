import type { HandlersOf } from '../../operations/handler.js';
import type { membersModule } from './operations.js';

/** Every handler of the members module. */
export const membersHandlers = {} satisfies HandlersOf<typeof membersModule>;
