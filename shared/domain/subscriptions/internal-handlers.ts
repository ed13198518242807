import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { confirmFreeJoin as confirm, joinFreePlan as join } from './free-joins.js';
import { subscriptionsModule } from './operations.js';

type Operations = NonNullable<typeof subscriptionsModule.internal>;

/** A free join on the join page (DESIGN D26): see `joinFreePlan` in `./free-joins.ts`. */
const joinFreePlan: OperationHandler<Operations['joinFreePlan']> = async (input, { runtime, principal }) =>
  join(runtime, principal, input);

/** The opening of a free join's confirmation link (DESIGN D26): see `confirmFreeJoin` in `./free-joins.ts`. */
const confirmFreeJoin: OperationHandler<Operations['confirmFreeJoin']> = async (input, { runtime, principal }) =>
  confirm(runtime, principal, input);

/** Every handler of the subscriptions module's internal operations. */
export const subscriptionsInternalHandlers = {
  joinFreePlan,
  confirmFreeJoin,
} satisfies InternalHandlersOf<typeof subscriptionsModule>;
