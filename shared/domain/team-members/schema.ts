import * as z from '../../schemas/zod.js';
import { listOf, ListQuery, NameText, Timestamp, Uuid } from '../../schemas/common.js';
import { Team } from '../teams/schema.js';
import { DAY_MS } from '../../clock.js';

/** Team member statuses (DESIGN D19; a closed list, written once). */
const TEAM_MEMBER_STATUSES = ['invited', 'active', 'removed'] as const;

/** Most roles a member holds directly. */
const MAX_MEMBER_ROLES = 10;
/** Most groups a member belongs to. */
export const MAX_MEMBER_GROUPS = 10;
/** How long an invitation can be accepted, in milliseconds (7 days). */
export const INVITATION_LIFETIME_MS = 7 * DAY_MS;

/**
 * A team member (DESIGN D19): a person who works in the team (dashboard, tokens minted on their behalf),
 * as the API returns them and `team.member_*` events carry them. Never the invitation token.
 * `role_ids` are the roles held directly; `group_ids` the groups, whose roles the member holds too.
 */
export const TeamMember = z
  .object({
    id: Uuid,
    email: z.string(),
    name: z.string(),
    status: z.enum(TEAM_MEMBER_STATUSES),
    role_ids: z.array(Uuid),
    group_ids: z.array(Uuid),
    invitation_expires_at: z
      .nullable(Timestamp)
      .check(z.describe('Until when the invitation can be accepted; null once the member joined or was removed.')),
    joined_at: z.nullable(Timestamp),
    removed_at: z.nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'TeamMember' });
/** A team member (see {@link TeamMember}). */
export type TeamMember = z.infer<typeof TeamMember>;

/** A page of team members. */
export const TeamMemberList = listOf(TeamMember, 'TeamMemberList');

/** The invited member with the invitation's credential, shown only in the response to the invitation. */
export const TeamMemberWithInvitation = z
  .extend(TeamMember, {
    invitation_token: z
      .string()
      .check(
        z.describe(
          '`inv_<id>_<secret>`: the one credential of `POST /v1/team-invitations/accept`. Shown only in this response.',
        ),
      ),
    invitation_link: z
      .string()
      .check(
        z.describe(
          'The acceptance link to send to the invitee, relative to the service’s base URL; the token is in the fragment, so it never reaches server logs. Shown only in this response.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'TeamMemberWithInvitation' });
/** See {@link TeamMemberWithInvitation}. */
export type TeamMemberWithInvitation = z.infer<typeof TeamMemberWithInvitation>;

/** `{id}` path parameters of a team member. */
export const TeamMemberIdParams = z.strictObject({ id: Uuid.check(z.describe('The team member id.')) });

/** Body of `POST /v1/team-members/invitations`. */
export const InviteTeamMemberRequest = z
  .strictObject({
    email: z
      .email()
      .check(
        z.maxLength(254),
        z.describe('The invitee’s e-mail address; unique among the team’s invited and active members (any case).'),
      ),
    name: NameText().check(z.describe('The invitee’s name, 1 to 100 characters.')),
    role_ids: z
      .array(Uuid)
      .check(
        z.minLength(1),
        z.maxLength(MAX_MEMBER_ROLES),
        z.describe(
          `Roles to give the member (1 to ${MAX_MEMBER_ROLES}); needs \`role:assign\`, and each role’s abilities must be held by the caller.`,
        ),
      ),
    group_ids: z
      .optional(z.array(Uuid).check(z.maxLength(MAX_MEMBER_GROUPS)))
      .check(z.describe(`Groups to add the member to (up to ${MAX_MEMBER_GROUPS}); needs \`group:manage-members\`.`)),
  })
  .register(z.globalRegistry, { id: 'InviteTeamMemberRequest' });
/** See {@link InviteTeamMemberRequest}. */
export type InviteTeamMemberRequest = z.infer<typeof InviteTeamMemberRequest>;

/** Body of `POST /v1/team-members/{id}`: only the fields given change. */
export const UpdateTeamMemberRequest = z
  .strictObject({
    name: z.optional(NameText()).check(z.describe('New name, 1 to 100 characters.')),
    role_ids: z
      .optional(z.array(Uuid).check(z.maxLength(MAX_MEMBER_ROLES)))
      .check(z.describe(`The member’s complete new set of roles (up to ${MAX_MEMBER_ROLES}); needs \`role:assign\`.`)),
    group_ids: z
      .optional(z.array(Uuid).check(z.maxLength(MAX_MEMBER_GROUPS)))
      .check(
        z.describe(
          `The member’s complete new set of groups (up to ${MAX_MEMBER_GROUPS}); needs \`group:manage-members\`.`,
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'UpdateTeamMemberRequest' });
/** See {@link UpdateTeamMemberRequest}. */
export type UpdateTeamMemberRequest = z.infer<typeof UpdateTeamMemberRequest>;

/** Query of `GET /v1/team-members` (and the `list_team_members` tool's arguments). */
export const ListTeamMembersQuery = z.extend(ListQuery, {
  role_id: z.optional(Uuid).check(z.describe('Only members holding this role directly.')),
  group_id: z.optional(Uuid).check(z.describe('Only members of this group.')),
  status: z.optional(z.enum(TEAM_MEMBER_STATUSES)).check(z.describe('Only members with this status.')),
});
/** See {@link ListTeamMembersQuery}. */
export type ListTeamMembersQuery = z.infer<typeof ListTeamMembersQuery>;

/** Body of `POST /v1/team-invitations/accept` (public: the invitation token is its only credential). */
export const AcceptTeamInvitationRequest = z
  .strictObject({
    token: z
      .string()
      .check(
        z.minLength(1),
        z.maxLength(200),
        z.describe('The invitation token (`inv_<id>_<secret>`) from the invitation link.'),
      ),
  })
  .register(z.globalRegistry, { id: 'AcceptTeamInvitationRequest' });

/** The answer to an accepted invitation: the team joined and the member, now active. */
export const AcceptedTeamInvitation = z
  .object({ team: Team, team_member: TeamMember })
  .register(z.globalRegistry, { id: 'AcceptedTeamInvitation' });
/** See {@link AcceptedTeamInvitation}. */
export type AcceptedTeamInvitation = z.infer<typeof AcceptedTeamInvitation>;
