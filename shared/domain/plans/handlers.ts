import type { HandlersOf } from '../../operations/handler.js';
import type { plansModule } from './operations.js';

/** Every handler of the plans module. */
export const plansHandlers = {} satisfies HandlersOf<typeof plansModule>;
