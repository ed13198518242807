import { timingSafeEqual } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { newTokenSecret, sha256 } from '../../auth/principal.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUlid, newUuid } from '../../ids.js';
import { integrationsOf } from '../../integrations.js';
import { logger } from '../../logger.js';
import type { Runtime } from '../../runtime.js';
import { teamMemberStore } from '../../store/team-members.js';
import { teamStore } from '../../store/teams.js';
import { countUsage, withinTierLimit } from '../billing/repository.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { writeGroupMembers } from '../groups/records.js';
import { countRoleAssignments } from '../roles/repository.js';
import { distinct } from '../roles/policy.js';
import { findTeam, getTeam } from '../teams/repository.js';
import { checkGrants, emitGroupsUpdated } from './changes.js';
import { emailSha256, findMember, parseStoredTeamInvitation, publicMember, type StoredTeamMember } from './records.js';
import {
  INVITATION_LIFETIME_MS,
  type AcceptedTeamInvitation,
  type InviteTeamMemberRequest,
  type TeamMemberWithInvitation,
} from './schema.js';
import { housekeepingTtl } from '../../store/ttl.js';

/**
 * Invitations to a team (DESIGN D19): an invitation is an item of its own partition (`INVITATION#<ULID>`),
 * holding only the SHA-256 of its secret; its token `inv_<ULID>_<secret>` is returned once, in the
 * invitation's response, and never stored, logged or put in an event.
 */

/** `inv_<ULID>_<base62 secret of 32 random bytes>`. */
const INVITATION_TOKEN_PATTERN = /^inv_([0-9A-HJKMNP-TV-Z]{26})_([0-9A-Za-z]{40,64})$/;
/** The one answer to an invitation token that cannot be accepted, whatever the reason (unknown, expired, used). */
const invalidInvitation = () =>
  new ProblemError(
    'NOT_FOUND',
    'This invitation cannot be accepted: it is unknown, expired or already used. Ask for a new invitation.',
  );

/**
 * Invites a person (`POST /v1/team-members/invitations`, D19, D20): member (`invited`), e-mail claim and invitation
 * (secret's SHA-256 only, valid {@link INVITATION_LIFETIME_MS}) in one transaction with `team.member_invited`; returns
 * the token and link, shown only here. Errors: TOKEN_MISSING_ABILITY, NOT_FOUND (role or group), TIER_LIMIT_REACHED,
 * CONFLICT (e-mail taken, group full, concurrent change).
 */
export async function inviteTeamMember(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  input: InviteTeamMemberRequest,
): Promise<TeamMemberWithInvitation> {
  const teamId = principal.teamId;
  const roleIds = distinct(input.role_ids);
  const groupIds = distinct(input.group_ids ?? []);
  const groups = await checkGrants(runtime.store, principal, roleIds, groupIds, null);
  const team = await getTeam(runtime.store, teamId);
  const nowMs = runtime.clock.nowMs();
  const now = isoTime(nowMs);
  const expiresAtMs = nowMs + INVITATION_LIFETIME_MS;
  const invitationId = newUlid(nowMs);
  const secret = newTokenSecret();
  const member: StoredTeamMember = {
    id: newUuid(),
    email: input.email,
    name: input.name,
    status: 'invited',
    role_ids: roleIds,
    group_ids: groupIds,
    invitation_expires_at: isoTime(expiresAtMs),
    joined_at: null,
    removed_at: null,
    created_at: now,
    updated_at: now,
    version: 1,
    invitation_id: invitationId,
    email_sha256: emailSha256(input.email),
  };
  const token = `inv_${invitationId}_${secret}`;
  // D20: invited and active members count against the tier's limit, in the same transaction.
  return withinTierLimit(runtime, teamId, 'team_members', () =>
    unitOfWork(runtime, teamId, (tx) => {
      countUsage(tx, teamId, 'team_members', 1);
      teamMemberStore.create(
        tx,
        teamId,
        member,
        () =>
          new ProblemError(
            'CONFLICT',
            'An invited or active member of the team has this e-mail address already; remove them first to invite the address again.',
          ),
      );
      teamMemberStore.createInvitation(tx, {
        id: invitationId,
        teamId,
        memberId: member.id,
        secretSha256: sha256(secret).toString('hex'),
        expiresAtMs,
        ttlSeconds: housekeepingTtl(expiresAtMs),
      });
      countRoleAssignments(tx, teamId, roleIds, 1);
      const changedGroups = groups.map((group) =>
        writeGroupMembers(tx, teamId, group, [...group.member_ids, member.id], now),
      );
      const publicView = publicMember(member);
      tx.emit({ type: 'team.member_invited', projectId: null, data: { team, team_member: publicView } });
      emitGroupsUpdated(tx, changedGroups);
      // The whole answer (token included) is what the request's idempotency record stores, sealed (D3).
      return {
        ...publicView,
        invitation_token: token,
        invitation_link: `/dashboard/invitations/accept#token=${token}`,
      };
    }),
  );
}

/**
 * E-mails an invitation's link to the invitee (DESIGN D19, D32) through the runtime's mail sender, when the service
 * knows its public base URL (an e-mail needs an absolute link). Best effort: the answer carries the link anyway, so a
 * failed send is logged (without the link) and not an error. The mail sender is loaded on first use (D23 budgets).
 */
export async function emailInvitation(
  runtime: Pick<Runtime, 'mail' | 'integrations'>,
  teamName: string,
  invited: Pick<TeamMemberWithInvitation, 'email' | 'name' | 'invitation_link' | 'invitation_expires_at'>,
): Promise<boolean> {
  const base = integrationsOf(runtime).publicBaseUrl;
  if (!base) return false;
  const link = `${base}${invited.invitation_link}`;
  try {
    const { mailSenderOf } = await import('../../mail/nodemailer.js');
    await mailSenderOf(runtime).send({
      to: invited.email,
      subject: `You are invited to ${teamName}`,
      text: [
        `Hi ${invited.name},`,
        '',
        `you are invited to join the team ${teamName}. Open this link to accept and sign in:`,
        link,
        '',
        `It works once, until ${invited.invitation_expires_at}.`,
      ].join('\n'),
    });
    return true;
  } catch (error) {
    logger.warn('invitation e-mail not sent', { error: (error as Error).name });
    return false;
  }
}

/**
 * Accepts an invitation (`POST /v1/team-invitations/accept`, public; the token is the credential, D19): secret compared
 * in constant time; any unusable token, removed member or deleted team gets the same NOT_FOUND. The member becomes
 * `active`, the invitation is deleted and `team.member_joined` emitted in one transaction, so a token works once even
 * under a race.
 */
export async function acceptTeamInvitation(runtime: UnitOfWorkRuntime, token: string): Promise<AcceptedTeamInvitation> {
  const parts = INVITATION_TOKEN_PATTERN.exec(token);
  const item = parts ? await teamMemberStore.readInvitation(runtime.store, parts[1]) : undefined;
  const invitation = item && parseStoredTeamInvitation(item);
  const presented = sha256(parts?.[2] ?? token);
  const expected = invitation ? Buffer.from(invitation.secret_sha256, 'hex') : Buffer.alloc(32);
  const matches = expected.length === presented.length && timingSafeEqual(presented, expected);
  const nowMs = runtime.clock.nowMs();
  if (!parts || !invitation || !matches || invitation.expires_at_ms <= nowMs) throw invalidInvitation();
  const teamId = invitation.team_id;
  const invitationId = invitation.id;
  const [member, team] = await Promise.all([
    findMember(runtime.store, teamId, invitation.member_id),
    findTeam(runtime.store, teamId),
  ]);
  if (!member || member.status !== 'invited' || member.invitation_id !== invitationId || !team || team.deleted_at)
    throw invalidInvitation();
  const now = isoTime(nowMs);
  const joined: StoredTeamMember = {
    ...member,
    status: 'active',
    joined_at: now,
    invitation_expires_at: null,
    invitation_id: null,
    updated_at: now,
    version: member.version + 1,
  };
  return unitOfWork(runtime, teamId, (tx) => {
    teamMemberStore.accept(tx, teamId, invitationId, member, joined, invalidInvitation);
    teamStore.checkNotDeleted(tx, teamId, invalidInvitation);
    const teamMember = publicMember(joined);
    tx.emit({ type: 'team.member_joined', projectId: null, data: { team, team_member: teamMember } });
    return { team, team_member: teamMember };
  });
}
