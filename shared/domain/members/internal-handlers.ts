import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { completeDiscordLink, discordAuthorizeUrl } from './discord-link.js';
import type { membersModule } from './operations.js';
import { recordPlatformMembership } from './platform-membership-handler.js';

type Operations = NonNullable<typeof membersModule.internal>;

/** The portal principal's own project and subscriber (D27): a subscriber principal is narrowed to one project. */
function portalSubject(principal: { subscriberId?: string | null; projectIds: readonly string[] | null }) {
  return { projectId: principal.projectIds?.[0] ?? '', subscriberId: principal.subscriberId ?? '' };
}

/** Starts Discord linking for the calling subscriber (D28): the authorize URL with a state bound to the session. */
const startDiscordLink: OperationHandler<Operations['startDiscordLink']> = async (input, { runtime, principal }) =>
  discordAuthorizeUrl(runtime, {
    teamId: principal.teamId,
    ...portalSubject(principal),
    portalSessionId: input.portal_session_id,
  });

/** Completes Discord linking for the calling subscriber (D28); errors as `completeDiscordLink`. */
const linkDiscordAccount: OperationHandler<Operations['linkDiscordAccount']> = async (input, { runtime, principal }) =>
  completeDiscordLink(runtime, {
    ...portalSubject(principal),
    portalSessionId: input.portal_session_id,
    code: input.code,
    state: input.state,
  });

/** Every handler of the members module's internal operations. */
export const membersInternalHandlers = {
  startDiscordLink,
  linkDiscordAccount,
  recordPlatformMembership,
} satisfies InternalHandlersOf<typeof membersModule>;
