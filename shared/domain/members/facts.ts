import { defineFacts } from '../define-facts.js';

/**
 * Members' keys (DESIGN D14, D17; their abilities are the subscribers' `project-user:*`): one partition per
 * project (`TEAM#<team>#PROJECT#<project>#MEMBERS`, sort key = the id), a reference item keyed by the id
 * for `/v1/members/{id}`, and a platform user claimed once per project by an item keyed by a SHA-256 of
 * its platform user id, holding the ids of its subscriber and member.
 */
export const membersFacts = defineFacts({
  keys: {
    memberPartition: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#MEMBERS`,
    member: (teamId: string, projectId: string, memberId: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#MEMBERS`,
      sk: `MEMBER#${memberId}`,
    }),
    memberRef: (teamId: string, memberId: string) => ({ pk: `TEAM#${teamId}#MEMBER#${memberId}`, sk: 'MEMBER_REF' }),
    platformUser: (teamId: string, projectId: string, platformUserIdSha256: string) => ({
      pk: `TEAM#${teamId}#PROJECT#${projectId}#PLATFORM_USER#${platformUserIdSha256}`,
      sk: 'PLATFORM_USER',
    }),
  },
  sortKeyPrefix: { member: 'MEMBER#' },
  entity: { member: 'member', memberRef: 'member_ref', platformUser: 'platform_user' },
});
