import { expect } from 'vitest';
import type { Role } from '../../shared/domain/roles/schema.js';
import { createRole } from '../../shared/domain/roles/repository.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

export default defineIsolationCases<{ a: Role; b: Role }>({
  seed: async (runtime, w) => ({
    a: await createRole(runtime, w.a.principal, {
      name: 'Isolation role of A',
      abilities: ['team:view', 'project:view'],
    }),
    b: await createRole(runtime, w.b.principal, {
      name: 'Isolation role of B',
      abilities: ['team:view', 'project:view'],
    }),
  }),
  secretsOfB: (extra) => [extra.b.id, extra.b.name],
  operations: {
    listRoles: {
      foreign: {
        input: () => ({ limit: 100 }),
        expect: { ok: (body) => expect(body.data.map((role: Role) => role.name)).toContain('Isolation role of A') },
      },
    },
    getRole: { foreign: { input: (_w, extra) => ({ id: extra.b.id }), expect: NOT_FOUND } },
    createRole: {
      foreign: {
        input: () => ({ name: 'Role made by A', abilities: ['team:view'] }),
        expect: { ok: (body) => expect(body.name).toBe('Role made by A') },
      },
    },
    updateRole: {
      foreign: { input: (_w, extra) => ({ id: extra.b.id, abilities: ['team:view'] }), expect: NOT_FOUND },
    },
    deleteRole: { foreign: { input: (_w, extra) => ({ id: extra.b.id }), expect: NOT_FOUND } },
  },
});
