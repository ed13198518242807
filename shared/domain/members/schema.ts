import * as z from 'zod';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';

/**
 * The member's shapes (DESIGN D12, D17): a member is the platform identity within a project (the person
 * on Telegram, Discord, the creator's site…), optionally linked to the subscriber (billing identity)
 * with the same `platform_user_id`. The webhook catalogue imports `Member` from here, so every
 * `member.*` payload's member is this one definition. A member carries no contact data.
 */

/** Member statuses (a closed list, written once). */
const MEMBER_STATUSES = ['joined', 'left', 'kicked', 'banned'] as const;
/** A member status. */
export type MemberStatus = (typeof MEMBER_STATUSES)[number];

/** Platform actions a member's `platform_error` can name (the `PlatformAdapter` port, DESIGN D22). */
const PLATFORM_ACTIONS = ['grant_access', 'revoke_access', 'kick', 'ban', 'unban'] as const;
/** A platform action. */
export type PlatformAction = (typeof PLATFORM_ACTIONS)[number];

/**
 * The last failed platform call for a member: recorded, never rolled back into the member's status, and
 * retried with exponential backoff until the platform agrees or the attempts run out (DESIGN D22;
 * `shared/domain/members/platform-retry.ts`).
 */
export const MemberPlatformError = z
  .object({
    action: z.enum(PLATFORM_ACTIONS).describe('The platform call that failed.'),
    message: z.string().describe('Why it failed (no credentials, no platform internals).'),
    at: Timestamp.describe('When it failed.'),
    attempts: z.number().int().positive().describe('Failed attempts so far to bring the platform in line (1 for the first failure); retries stop after a fixed number.'),
    next_attempt_at: Timestamp.nullable().describe('When the service tries again (it reconciles the member\u2019s access with the platform: grant, remove or ban as the member\u2019s state says now); null once it gave up.'),
  })
  .meta({ id: 'MemberPlatformError' });
/** A recorded platform failure (see {@link MemberPlatformError}). */
export type MemberPlatformError = z.infer<typeof MemberPlatformError>;

/**
 * A personal, single-use invite link to a linked resource (DESIGN D22, Telegram), made when a subscriber
 * gains access and sent in `member.access_granted`; joining through it links the new member to the
 * subscriber. It is a bearer link: pass it to that subscriber only.
 */
export const MemberInviteLink = z
  .object({
    url: z.string().describe('The link the subscriber follows to join the chat (works once).'),
    expires_at: Timestamp.nullable().describe('When the link stops working, or null.'),
  })
  .meta({ id: 'MemberInviteLink' });
/** A personal invite link (see {@link MemberInviteLink}). */
export type MemberInviteLink = z.infer<typeof MemberInviteLink>;

/** A member of a project's community, as the API returns it and events carry it (DESIGN D17). */
export const Member = z
  .object({
    id: Uuid,
    project_id: Uuid,
    platform_user_id: z.string().describe('The person\u2019s id on the project\u2019s platform (unique per project).'),
    username: z.string().nullable().describe('The person\u2019s username on the platform, or null.'),
    display_name: z.string().nullable().describe('The person\u2019s display name on the platform, or null.'),
    subscriber_id: Uuid.nullable().describe('The linked subscriber (same platform user id), or null for a free member.'),
    status: z.enum(MEMBER_STATUSES).describe('`joined` (in the community), `left` (left, or ban lifted), `kicked`, `banned`.'),
    joined_at: Timestamp.nullable().describe('When the member last joined, or null if never.'),
    status_changed_at: Timestamp.describe('When `status` last changed.'),
    platform_error: MemberPlatformError.nullable().describe('The last failed platform call (ban, kick, unban, access), or null when the last one succeeded.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Member' });
/** A member (see {@link Member}). */
export type Member = z.infer<typeof Member>;

/** A page of members. */
export const MemberList = listOf(Member, 'MemberList');

/** `{id}` path parameters of a member. */
export const MemberIdParams = z.object({ id: Uuid.describe('The member id.') }).strict();

/** `{project_id}` path parameters of a project's members. */
export const MemberProjectParams = z.object({ project_id: Uuid.describe('The project the members belong to.') }).strict();

/** Query of `GET /v1/projects/{project_id}/members`. */
export const ListMembersQuery = ListQuery.extend({
  status: z.enum(MEMBER_STATUSES).optional().describe('Only members with this status.'),
}).strict();
/** A validated member list query (see {@link ListMembersQuery}). */
export type ListMembersQuery = z.infer<typeof ListMembersQuery>;
