import type { HandlersOf } from '../../operations/handler.js';
import type { accessCodesModule } from './operations.js';

/** Every handler of the access codes module. */
export const accessCodesHandlers = {} satisfies HandlersOf<typeof accessCodesModule>;
