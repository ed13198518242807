import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import { Timestamp, Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { Member } from './schema.js';

/** The portal session a Discord link is bound to (its `state` is single use and names this session, DESIGN D28). */
const PortalSessionId = z.string().check(z.minLength(1), z.maxLength(64));

/** A profile field as the platform reports it (absent: unknown, keep what is recorded; null: none). */
const PlatformProfileField = z.optional(z.nullable(z.string().check(z.maxLength(200))));

/**
 * Linking a subscriber's Discord account from the portal (DESIGN D28, D35): internal operations of a subscriber
 * principal (surface `portal`); and a platform's membership update (D17, D22) reported through the project's verified
 * hook (surface `hook`). All exempt from the billing lockdown (D20: the subscriber side keeps running).
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
  recordPlatformMembership: defineInternalOperation({
    id: 'recordPlatformMembership',
    summary:
      'Record what the platform reported of a person in the project’s community: joined, left, kicked, banned or a new profile.',
    tag: 'Members',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({
      project_id: Uuid,
      platform_user_id: z.string().check(z.minLength(1), z.maxLength(64)),
      change: z.enum(['joined', 'left', 'kicked', 'banned', 'profile']),
      username: PlatformProfileField,
      display_name: PlatformProfileField,
      invited_subscriber_id: z.optional(Uuid),
    }),
    output: z.nullable(Member),
    events: ['member.joined', 'member.left', 'member.kicked', 'member.banned', 'member.updated'],
    write: true,
    lockdown: 'exempt',
  }),
};
