import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import type { Runtime } from '../../shared/runtime.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A joined member (no subscriber) of a project. */
async function seedMember(
  runtime: Runtime,
  teamId: string,
  projectId: string,
  tag: string,
): Promise<{ memberId: string }> {
  const member = await recordPlatformMembership(runtime, {
    teamId,
    projectId,
    platformUserId: `${tag}-member-user`,
    change: 'joined',
    username: `${tag}_member`,
  });
  return { memberId: member!.id };
}

export default defineIsolationCases<{ b: { memberId: string }; aOther: { memberId: string } }>({
  seed: async (runtime, w) => ({
    b: await seedMember(runtime, w.b.team.id, w.b.project.id, 'bteam'),
    aOther: await seedMember(runtime, w.a.team.id, w.a.otherProject.id, 'aother'),
  }),
  secretsOfB: (extra) => [extra.b.memberId, 'bteam-member-user', 'bteam_member'],
  operations: {
    listMembers: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    getMember: {
      foreign: { input: (_w, extra) => ({ id: extra.b.memberId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.memberId }), expect: NOT_FOUND },
    },
  },
});
