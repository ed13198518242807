import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import { Timestamp } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';

/** The portal session a Discord link is bound to (its `state` is single use and names this session, DESIGN D28). */
const PortalSessionId = z.string().check(z.minLength(1), z.maxLength(64));

/**
 * Linking a subscriber's Discord account from the portal (DESIGN D28, D35): internal operations of a subscriber
 * principal (surface `portal`), exempt from the billing lockdown (D20: the subscriber side keeps running).
 */
export const membersInternalOperations = {
  startDiscordLink: defineInternalOperation({
    id: 'startDiscordLink',
    summary: 'Start linking the subscriber’s Discord account: a single-use state and the Discord authorize URL.',
    tag: 'Members',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({ portal_session_id: PortalSessionId }),
    output: z.object({ url: z.string(), expires_at: Timestamp }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  linkDiscordAccount: defineInternalOperation({
    id: 'linkDiscordAccount',
    summary:
      'Complete linking the subscriber’s Discord account (Discord’s callback): the member linked, added to the server with its roles.',
    tag: 'Members',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({
      portal_session_id: PortalSessionId,
      code: z.string().check(z.minLength(1), z.maxLength(512)),
      state: z.string().check(z.minLength(1), z.maxLength(512)),
    }),
    output: z.object({
      guild: z.enum(['joined', 'already_in', 'no_access', 'failed']),
      reason: z.nullable(z.string()),
    }),
    events: ['member.joined', 'member.updated', 'member.access_granted'],
    write: true,
    lockdown: 'exempt',
    callsProvider: true,
  }),
};
