import type { HandlersOf } from '../../operations/handler.js';
import type { rolesModule } from './operations.js';

/** Every handler of the roles module. */
export const rolesHandlers = {} satisfies HandlersOf<typeof rolesModule>;
