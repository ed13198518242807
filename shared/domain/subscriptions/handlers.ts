import type { HandlersOf } from '../../operations/handler.js';
import type { subscriptionsModule } from './operations.js';

/** Every handler of the subscriptions module. */
export const subscriptionsHandlers = {} satisfies HandlersOf<typeof subscriptionsModule>;
