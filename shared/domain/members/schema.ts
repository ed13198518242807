import * as z from '../../schemas/zod.js';
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
    action: z.enum(PLATFORM_ACTIONS).check(z.describe('The platform call that failed.')),
    message: z.string().check(z.describe('Why it failed (no credentials, no platform internals).')),
    at: Timestamp.check(z.describe('When it failed.')),
    attempts: z
      .number()
      .check(
        z.int(),
        z.positive(),
        z.describe(
          'Failed attempts so far to bring the platform in line (1 for the first failure); retries stop after a fixed number.',
        ),
      ),
    next_attempt_at: z
      .nullable(Timestamp)
      .check(
        z.describe(
          'When the service tries again (it reconciles the member\u2019s access with the platform: grant, remove or ban as the member\u2019s state says now); null once it gave up.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'MemberPlatformError' });
/** A recorded platform failure (see {@link MemberPlatformError}). */
export type MemberPlatformError = z.infer<typeof MemberPlatformError>;

/**
 * A personal, single-use invite link to a linked resource (DESIGN D22, Telegram), made when a subscriber
 * gains access and sent in `member.access_granted`; joining through it links the new member to the
 * subscriber. It is a bearer link: pass it to that subscriber only.
 */
export const MemberInviteLink = z
  .object({
    url: z.string().check(z.describe('The link the subscriber follows to join the chat (works once).')),
    expires_at: z.nullable(Timestamp).check(z.describe('When the link stops working, or null.')),
  })
  .register(z.globalRegistry, { id: 'MemberInviteLink' });
/** A personal invite link (see {@link MemberInviteLink}). */
export type MemberInviteLink = z.infer<typeof MemberInviteLink>;

/** A member of a project's community, as the API returns it and events carry it (DESIGN D17). */
export const Member = z
  .object({
    id: Uuid,
    project_id: Uuid,
    platform_user_id: z
      .string()
      .check(z.describe('The person\u2019s id on the project\u2019s platform (unique per project).')),
    username: z.nullable(z.string()).check(z.describe('The person\u2019s username on the platform, or null.')),
    display_name: z.nullable(z.string()).check(z.describe('The person\u2019s display name on the platform, or null.')),
    subscriber_id: z
      .nullable(Uuid)
      .check(z.describe('The linked subscriber (same platform user id), or null for a free member.')),
    status: z
      .enum(MEMBER_STATUSES)
      .check(z.describe('`joined` (in the community), `left` (left, or ban lifted), `kicked`, `banned`.')),
    joined_at: z.nullable(Timestamp).check(z.describe('When the member last joined, or null if never.')),
    status_changed_at: Timestamp.check(z.describe('When `status` last changed.')),
    platform_error: z
      .nullable(MemberPlatformError)
      .check(
        z.describe('The last failed platform call (ban, kick, unban, access), or null when the last one succeeded.'),
      ),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Member' });
/** A member (see {@link Member}). */
export type Member = z.infer<typeof Member>;

/** A page of members. */
export const MemberList = listOf(Member, 'MemberList');

/** `{id}` path parameters of a member. */
export const MemberIdParams = z.strictObject({ id: Uuid.check(z.describe('The member id.')) });

/** `{project_id}` path parameters of a project's members. */
export const MemberProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project the members belong to.')),
});

/** Query of `GET /v1/projects/{project_id}/members`. */
export const ListMembersQuery = z.extend(ListQuery, {
  status: z.optional(z.enum(MEMBER_STATUSES)).check(z.describe('Only members with this status.')),
});
/** A validated member list query (see {@link ListMembersQuery}). */
export type ListMembersQuery = z.infer<typeof ListMembersQuery>;
