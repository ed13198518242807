import { ProblemError } from '../../errors.js';
import { ConcurrentChange } from '../roles/policy.js';
import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { groupStore } from '../../store/groups.js';
import { recordParser } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import type { Item } from '../../store/requests.js';
import type { Transaction } from '../../store/unit-of-work.js';
import { Group } from './schema.js';

/**
 * Group items as other objects see them (team members join and leave groups in their own transactions):
 * reading, mapping and the one conditional write of a group's member list. No use case lives here, so
 * `team-members/` and `groups/` can both import it (DESIGN D14, D19).
 */

/**
 * A group item as stored (`keys.group`, DESIGN D19): the public fields but `member_count` (the length
 * of `member_ids`), the lists absent until set on older items, and its concurrency `version` (absent = 0).
 */
const GroupItem = z.extend(
  z.omit(z.partial(Group, { description: true, role_ids: true, member_ids: true }), { member_count: true }),
  {
    version: z.optional(z.number()),
  },
);

/** Parses a group item (throws StoredRecordError naming its key when it does not match). */
const parseGroupItem = recordParser(entity.group, GroupItem);

/** A stored group: the public fields plus its concurrency version. */
export type StoredGroup = Group & { version: number };

/**
 * Maps a stored group item, parsed through its stored-record schema (its `member_count` is the length of its member
 * list).
 */
export function toStoredGroup(item: Item): StoredGroup {
  const stored = parseGroupItem(item);
  const memberIds = stored.member_ids ?? [];
  return {
    id: stored.id,
    name: stored.name,
    description: stored.description ?? null,
    role_ids: stored.role_ids ?? [],
    member_ids: memberIds,
    member_count: memberIds.length,
    created_at: stored.created_at,
    updated_at: stored.updated_at,
    version: stored.version ?? 0,
  };
}

/** The public fields of a stored group (drops the version). */
export function publicGroup({ version: _version, ...group }: StoredGroup): Group {
  return group;
}

/** A concurrent change of a group was detected by its version (CONFLICT). */
export const groupChangedMeanwhile = (groupId: string) =>
  new ConcurrentChange(`Group ${groupId} was changed by another request meanwhile; read it again and retry.`);

/**
 * Reads the groups `groupIds` of the team (strongly consistent BatchGetItems), in the order given.
 * Errors: NOT_FOUND naming the ids that are not groups of the team, unless `skipMissing` (then they are
 * left out).
 */
export async function loadGroups(
  store: Store,
  teamId: string,
  groupIds: readonly string[],
  options: { skipMissing?: boolean } = {},
): Promise<StoredGroup[]> {
  const distinctIds = [...new Set(groupIds)];
  const found = new Map<string, StoredGroup>();
  for (const item of await groupStore.readMany(store, teamId, distinctIds)) {
    const group = toStoredGroup(item);
    found.set(group.id, group);
  }
  const missing = distinctIds.filter((groupId) => !found.has(groupId));
  if (missing.length && !options.skipMissing) throw new ProblemError('NOT_FOUND', `No group ${missing.join(', ')}.`);
  return distinctIds.flatMap((groupId) => found.get(groupId) ?? []);
}

/**
 * Writes a group's new member list in the caller's transaction, guarded by the version read (CONFLICT
 * when the group changed meanwhile), and returns the group as it will be. `updatedAt`: ISO timestamp.
 */
export function writeGroupMembers(
  tx: Transaction,
  teamId: string,
  group: StoredGroup,
  memberIds: readonly string[],
  updatedAt: string,
): StoredGroup {
  const next: StoredGroup = {
    ...group,
    member_ids: [...memberIds],
    member_count: memberIds.length,
    updated_at: updatedAt,
    version: group.version + 1,
  };
  groupStore.writeMembers(tx, teamId, group, next, () => groupChangedMeanwhile(group.id));
  return next;
}
