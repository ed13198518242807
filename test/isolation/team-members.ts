import { expect } from 'vitest';
import { createRole } from '../../shared/domain/roles/repository.js';
import type { Role } from '../../shared/domain/roles/schema.js';
import { inviteTeamMember } from '../../shared/domain/team-members/invitations.js';
import type { TeamMemberWithInvitation } from '../../shared/domain/team-members/schema.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

interface Seeded {
  a: TeamMemberWithInvitation;
  b: TeamMemberWithInvitation;
  bRole: Role;
}

/** Team B's invitation id with a secret of the right shape that is not its secret. */
const forged = (token: string) => `${token.slice(0, token.lastIndexOf('_') + 1)}${'A'.repeat(44)}`;

export default defineIsolationCases<Seeded>({
  seed: async (runtime, w) => {
    const aRole = await createRole(runtime, w.a.principal, { name: 'Member role of A', abilities: ['team:view'] });
    const bRole = await createRole(runtime, w.b.principal, { name: 'Member role of B', abilities: ['team:view'] });
    return {
      a: await inviteTeamMember(runtime, w.a.principal, {
        email: 'member-a@example.com',
        name: 'Member of A',
        role_ids: [aRole.id],
      }),
      b: await inviteTeamMember(runtime, w.b.principal, {
        email: 'member-b@example.com',
        name: 'Member of B',
        role_ids: [bRole.id],
      }),
      bRole,
    };
  },
  secretsOfB: (extra) => [
    extra.b.id,
    extra.b.email,
    extra.b.name,
    extra.b.invitation_token.split('_').at(-1)!,
    extra.bRole.id,
    extra.bRole.name,
  ],
  operations: {
    listTeamMembers: {
      foreign: {
        input: () => ({ limit: 100 }),
        expect: {
          ok: (body) =>
            expect(body.data.map((member: { email: string }) => member.email)).toContain('member-a@example.com'),
        },
      },
    },
    getTeamMember: { foreign: { input: (_w, extra) => ({ id: extra.b.id }), expect: NOT_FOUND } },
    // A role of team B cannot be given in team A.
    inviteTeamMember: {
      foreign: {
        input: (_w, extra) => ({ email: 'invited-by-a@example.com', name: 'Invited by A', role_ids: [extra.bRole.id] }),
        expect: NOT_FOUND,
      },
    },
    // Public route: the bearer token is ignored; a forged invitation token of team B is refused like any other.
    acceptTeamInvitation: {
      foreign: { input: (_w, extra) => ({ token: forged(extra.b.invitation_token) }), expect: NOT_FOUND },
    },
    updateTeamMember: { foreign: { input: (_w, extra) => ({ id: extra.b.id, name: 'Hijacked' }), expect: NOT_FOUND } },
    removeTeamMember: { foreign: { input: (_w, extra) => ({ id: extra.b.id }), expect: NOT_FOUND } },
  },
});
