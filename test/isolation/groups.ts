import { expect } from 'vitest';
import { createGroup } from '../../shared/domain/groups/repository.js';
import type { Group } from '../../shared/domain/groups/schema.js';
import { inviteTeamMember } from '../../shared/domain/team-members/invitations.js';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

interface Seeded {
  a: Group;
  b: Group;
  bMember: { id: string; email: string; name: string; token: string };
}

export default defineIsolationCases<Seeded>({
  seed: async (runtime, w) => {
    const bMember = await inviteTeamMember(runtime, w.b.principal, {
      email: 'grouped-b@example.com',
      name: 'Grouped member of B',
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    return {
      a: await createGroup(runtime, w.a.principal, {
        name: 'Isolation group of A',
        role_ids: [BUILT_IN_ROLE_IDS.viewer],
      }),
      b: await createGroup(runtime, w.b.principal, {
        name: 'Isolation group of B',
        role_ids: [BUILT_IN_ROLE_IDS.viewer],
        member_ids: [bMember.id],
      }),
      bMember: { id: bMember.id, email: bMember.email, name: bMember.name, token: bMember.invitation_token },
    };
  },
  secretsOfB: (extra) => [
    extra.b.id,
    extra.b.name,
    extra.bMember.id,
    extra.bMember.email,
    extra.bMember.name,
    extra.bMember.token.split('_').at(-1)!,
  ],
  operations: {
    listGroups: {
      foreign: {
        input: () => ({ limit: 100 }),
        expect: { ok: (body) => expect(body.data.map((group: Group) => group.name)).toContain('Isolation group of A') },
      },
    },
    getGroup: { foreign: { input: (_w, extra) => ({ id: extra.b.id }), expect: NOT_FOUND } },
    // Team B's member cannot be put in a group of team A.
    createGroup: {
      foreign: {
        input: (_w, extra) => ({ name: 'Group made by A', member_ids: [extra.bMember.id] }),
        expect: NOT_FOUND,
      },
    },
    updateGroup: { foreign: { input: (_w, extra) => ({ id: extra.b.id, name: 'Hijacked' }), expect: NOT_FOUND } },
    deleteGroup: { foreign: { input: (_w, extra) => ({ id: extra.b.id }), expect: NOT_FOUND } },
  },
});
