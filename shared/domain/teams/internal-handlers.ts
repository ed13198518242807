import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { teamsModule } from './operations.js';
import { createTeam as create } from './repository.js';

type Operations = NonNullable<typeof teamsModule.internal>;

/** Creates a team and identifies it, so its log gets the entry (D35); errors as `createTeam`. */
const createTeam: OperationHandler<Operations['createTeam']> = async (input, { runtime, identify }) => {
  const wake = { onEventsCommitted: () => runtime.eventsCommitted() };
  const team = await create(runtime.store, runtime.clock, { name: input.name }, wake);
  identify?.({ teamId: team.id });
  return team;
};

/** Every handler of the teams module's internal operations. */
export const teamsInternalHandlers = { createTeam } satisfies InternalHandlersOf<typeof teamsModule>;
