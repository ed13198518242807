import { ProblemError } from '../../errors.js';
import { ConcurrentChange } from '../roles/policy.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { teamMemberStore } from '../../store/team-members.js';
import type { Store } from '../../store/store.js';
import type { Item } from '../../store/requests.js';
import type { Transaction } from '../../store/unit-of-work.js';
import { TeamMember } from './schema.js';

/**
 * Team member items as other objects see them (groups add and remove members in their own
 * transactions): reading, mapping, the item and e-mail hash as first written, and the one conditional
 * write of a member's group list. No use case lives here, so `groups/` and `team-members/` can both
 * import it (DESIGN D14, D19).
 */

/**
 * A team member item as stored (`keys.teamMember`, DESIGN D19): the public fields (lists and the
 * invitation's dates absent until set on older items) plus its concurrency `version` (absent = 0), its
 * pending invitation's id and the SHA-256 of its e-mail.
 */
const TeamMemberItem = z.extend(
  z.partial(TeamMember, {
    role_ids: true,
    group_ids: true,
    invitation_expires_at: true,
    joined_at: true,
    removed_at: true,
  }),
  {
    version: z.optional(z.number()),
    invitation_id: z.optional(z.nullable(z.string())),
    email_sha256: z.string(),
  },
);

/** Parses a team member item (throws StoredRecordError naming its key when it does not match). */
const parseTeamMemberItem = recordParser(entity.teamMember, TeamMemberItem);

/** A member's e-mail claim as stored (`keys.teamMemberEmail`, DESIGN D19): the member holding the address. */
const StoredMemberEmailClaim = z.object({ member_id: TeamMember.shape.id });

/**
 * Parses an e-mail claim item (throws StoredRecordError; its key, an e-mail's SHA-256, is withheld from the message).
 */
export const parseStoredMemberEmailClaim = recordParser(
  entity.teamMemberEmail,
  StoredMemberEmailClaim,
  () => 'team member e-mail claim (key: an e-mail’s SHA-256, withheld)',
);

/**
 * A pending invitation as stored (`keys.teamInvitation`, DESIGN D19): its id, team and member, the
 * SHA-256 (hex) of the token's secret and its expiry (epoch MILLISECONDS).
 */
const StoredTeamInvitation = z.object({
  id: z.string(),
  team_id: z.string(),
  member_id: TeamMember.shape.id,
  secret_sha256: z.string().check(z.regex(/^[0-9a-f]{64}$/)),
  expires_at_ms: z.number(),
});

/**
 * Parses an invitation item (throws StoredRecordError naming its key and failing paths, never a value: the secret's
 * hash stays out).
 */
export const parseStoredTeamInvitation = recordParser(entity.teamInvitation, StoredTeamInvitation);

/** A stored team member: the public fields plus its concurrency version and its pending invitation's id. */
export type StoredTeamMember = TeamMember & { version: number; invitation_id: string | null; email_sha256: string };

/** Maps a stored member item, parsed through its stored-record schema. */
export function toStoredMember(item: Item): StoredTeamMember {
  const stored = parseTeamMemberItem(item);
  return {
    ...stored,
    role_ids: stored.role_ids ?? [],
    group_ids: stored.group_ids ?? [],
    invitation_expires_at: stored.invitation_expires_at ?? null,
    joined_at: stored.joined_at ?? null,
    removed_at: stored.removed_at ?? null,
    version: stored.version ?? 0,
    invitation_id: stored.invitation_id ?? null,
  };
}

/** The public fields of a stored member (never the invitation id, the e-mail hash or the version). */
export function publicMember({
  version: _version,
  invitation_id: _invitation,
  email_sha256: _email,
  ...member
}: StoredTeamMember): TeamMember {
  return member;
}

/** NOT_FOUND for an id that is not a member of the team. */
export const memberNotFound = (memberId: string) => new ProblemError('NOT_FOUND', `No team member ${memberId}.`);

/** The lower-case hex SHA-256 of an e-mail address as compared for uniqueness (trimmed, lower case). */
export { emailSha256 } from '../../auth/principal.js';

/** A concurrent change of a member was detected by its version (CONFLICT). */
export const memberChangedMeanwhile = (memberId: string) =>
  new ConcurrentChange(`Team member ${memberId} was changed by another request meanwhile; read them again and retry.`);

/** Reads one member of the team (strongly consistent); null when absent. */
export async function findMember(store: Store, teamId: string, memberId: string): Promise<StoredTeamMember | null> {
  const item = await teamMemberStore.read(store, teamId, memberId);
  return item ? toStoredMember(item) : null;
}

/**
 * Reads the members `memberIds` of the team (strongly consistent BatchGetItems), in the order given.
 * Errors: NOT_FOUND naming the ids that are not members of the team.
 */
export async function loadMembers(
  store: Store,
  teamId: string,
  memberIds: readonly string[],
): Promise<StoredTeamMember[]> {
  const distinctIds = [...new Set(memberIds)];
  const found = new Map<string, StoredTeamMember>();
  for (const item of await teamMemberStore.readMany(store, teamId, distinctIds)) {
    const member = toStoredMember(item);
    found.set(member.id, member);
  }
  const missing = distinctIds.filter((memberId) => !found.has(memberId));
  if (missing.length) throw new ProblemError('NOT_FOUND', `No team member ${missing.join(', ')}.`);
  return distinctIds.map((memberId) => found.get(memberId)!);
}

/**
 * Writes a member's new group list in the caller's transaction, guarded by the version read and by the
 * member not being removed (CONFLICT otherwise), and returns the member as it will be.
 * `updatedAt`: ISO timestamp.
 */
export function writeMemberGroups(
  tx: Transaction,
  teamId: string,
  member: StoredTeamMember,
  groupIds: readonly string[],
  updatedAt: string,
): StoredTeamMember {
  const next: StoredTeamMember = {
    ...member,
    group_ids: [...groupIds],
    updated_at: updatedAt,
    version: member.version + 1,
  };
  teamMemberStore.writeGroups(tx, teamId, member, next, () => memberChangedMeanwhile(member.id));
  return next;
}
