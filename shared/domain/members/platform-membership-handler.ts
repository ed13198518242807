import type { OperationHandler } from '../../operations/handler.js';
import type { membersModule } from './operations.js';
import { recordPlatformMembership as record } from './platform-updates.js';

type Operations = NonNullable<typeof membersModule.internal>;

/**
 * Records a platform membership update in the principal's team (D17); errors as `recordPlatformMembership`. Bound in
 * `internal-handlers.ts`; in a file of its own so the Telegram hook loads it without the portal's Discord linking.
 */
export const recordPlatformMembership: OperationHandler<Operations['recordPlatformMembership']> = async (
  input,
  { runtime, principal },
) =>
  record(runtime, {
    teamId: principal.teamId,
    projectId: input.project_id,
    platformUserId: input.platform_user_id,
    change: input.change,
    username: input.username,
    displayName: input.display_name,
    invitedSubscriberId: input.invited_subscriber_id,
  });
