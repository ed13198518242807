import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { recordBotPermissions as record } from './changes.js';
import type { projectsModule } from './operations.js';

type Operations = NonNullable<typeof projectsModule.internal>;

/** Records the bot's permissions as the platform reported them (D22); errors as `recordBotPermissions`. */
const recordBotPermissions: OperationHandler<Operations['recordBotPermissions']> = async (
  input,
  { runtime, principal },
) => record(runtime, principal, input.project_id, input.permissions);

/** Every handler of the projects module's internal operations. */
export const projectsInternalHandlers = { recordBotPermissions } satisfies InternalHandlersOf<typeof projectsModule>;
