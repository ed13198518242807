import type { HandlersOf } from '../../operations/handler.js';
import type { subscribersModule } from './operations.js';

/** Every handler of the subscribers module. */
export const subscribersHandlers = {} satisfies HandlersOf<typeof subscribersModule>;
