import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { PlatformResourceTarget } from '../../platforms/platform-adapter.js';
import { Team } from '../teams/schema.js';
import { Member, MemberPlatformError } from './schema.js';

/**
 * A member's `platform_error` as stored (DESIGN D22): one recorded before retries existed has no
 * `attempts` nor `next_attempt_at`.
 */
const StoredMemberPlatformError = z.partial(MemberPlatformError, { attempts: true, next_attempt_at: true });

/**
 * A member item as stored (`keys.member`, DESIGN D14, D17): the public fields, the nullable ones also
 * absent on some items (read as null). Its `revision` is read by `revisionOf` and its pending
 * invite-link revocations by {@link parseStoredInviteLinkRevocations}, not here.
 */
const StoredMember = z.extend(
  z.partial(Member, { username: true, display_name: true, subscriber_id: true, joined_at: true }),
  {
    platform_error: z.optional(z.nullable(StoredMemberPlatformError)),
  },
);
/** Parses a member item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredMember = recordParser(entity.member, StoredMember);

/**
 * A Discord link attempt as stored (DESIGN D28), keyed by the SHA-256 of its OAuth2 `state`: the team it
 * belongs to (its project, subscriber, portal session and expiry are checked by the conditional delete).
 */
const StoredDiscordLinkState = z.object({ team_id: Team.shape.id });

/**
 * Parses a Discord link attempt (throws StoredRecordError naming the item type, never its key: the hash of a bearer
 * state).
 */
export const parseStoredDiscordLinkState = recordParser(
  entity.discordLinkState,
  StoredDiscordLinkState,
  () => "discord link state (key: an OAuth2 state's SHA-256, withheld)",
);

/** The member item's attribute holding its pending invite-link revocations (absent: none; `platform-retry.ts`). */
export const INVITE_LINK_REVOCATIONS_ATTRIBUTE = 'invite_link_revocations';

/**
 * A member's pending invite-link revocations as stored (DESIGN D22): the linked resource each link was
 * made for and the link (`url`: a bearer secret, which a parse error never names).
 */
const StoredInviteLinkRevocations = z.object({
  [INVITE_LINK_REVOCATIONS_ATTRIBUTE]: z.optional(
    z.array(z.object({ resource: PlatformResourceTarget, url: z.string() })),
  ),
});

/**
 * Parses a member item's pending invite-link revocations (throws StoredRecordError naming its key when they do not
 * match).
 */
export const parseStoredInviteLinkRevocations = recordParser(entity.member, StoredInviteLinkRevocations);

/** A member's reference item (`keys.memberRef`): the project of a member id. */
const StoredMemberRef = z.object({ project_id: Member.shape.project_id });

/** Parses a member's reference item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredMemberRef = recordParser(entity.memberRef, StoredMemberRef);

/**
 * A platform-user claim as stored (`platformUserKey`): who holds the platform user id in a project (each absent: nobody
 * yet), and with a member its status copy (`claimStatusCopy`; absent on claims written before it was kept).
 */
const StoredPlatformUserClaim = z.object({
  subscriber_id: z.optional(Member.shape.id),
  member_id: z.optional(Member.shape.id),
  member_status: z.optional(Member.shape.status),
  member_status_changed_at: z.optional(Member.shape.status_changed_at),
});
/** A platform-user claim as stored. */
export type StoredPlatformUserClaim = z.infer<typeof StoredPlatformUserClaim>;

/** Parses a platform-user claim (throws StoredRecordError naming its key when it does not match). */
export const parseStoredPlatformUserClaim = recordParser(entity.platformUser, StoredPlatformUserClaim);
