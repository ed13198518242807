import { expect } from 'vitest';
import { linkResource } from '../../shared/domain/projects/changes.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/**
 * A resource linked to team B's project and one linked to team A's other project (outside the scoped token's reach).
 */
interface Seeded {
  bResource: { id: string; platform_resource_id: string };
  aOtherResource: { id: string };
}

export default defineIsolationCases<Seeded>({
  seed: async (runtime, w) => {
    const bResource = await linkResource(runtime, w.b.principal, w.b.project.id, {
      kind: 'channel',
      platform_resource_id: 'b-secret-channel-4711',
      name: 'B channel',
    });
    const aOtherResource = await linkResource(runtime, w.a.principal, w.a.otherProject.id, {
      kind: 'group',
      platform_resource_id: 'a-other-group',
    });
    return { bResource, aOtherResource };
  },
  secretsOfB: (extra) => [extra.bResource.id, extra.bResource.platform_resource_id],
  operations: {
    createProject: {
      foreign: {
        input: () => ({ name: 'Made by A', platform_type: 'discord' }),
        expect: { ok: (body) => expect(body.name).toBe('Made by A') },
      },
      scoped: {
        input: () => ({ name: 'Scoped', platform_type: 'discord' }),
        expect: { code: 'TOKEN_MISSING_ABILITY' },
      },
    },
    listProjects: {
      foreign: { input: () => ({ limit: 100 }), expect: { ok: (body) => expect(body.data.length).toBeGreaterThan(0) } },
      scoped: { input: () => ({ limit: 100 }), expect: { ok: (body) => expect(body.data).toHaveLength(1) } },
    },
    getProject: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    updateProject: {
      foreign: {
        input: (w) => ({ project_id: w.b.project.id, name: 'Hijacked', description: null }),
        expect: NOT_FOUND,
      },
    },
    archiveProject: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    unarchiveProject: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    deleteProject: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    connectProjectBot: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, token: `4242:${'a'.repeat(30)}` }), expect: NOT_FOUND },
    },
    disconnectProjectBot: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    linkProjectResource: {
      foreign: {
        input: (w) => ({ project_id: w.b.project.id, kind: 'channel', platform_resource_id: 'a-channel' }),
        expect: NOT_FOUND,
      },
    },
    unlinkProjectResource: {
      foreign: {
        input: (w, extra) => ({ project_id: w.b.project.id, resource_id: extra.bResource.id }),
        expect: NOT_FOUND,
      },
      scoped: {
        input: (w, extra) => ({ project_id: w.a.otherProject.id, resource_id: extra.aOtherResource.id }),
        expect: NOT_FOUND,
      },
    },
    connectProjectPaymentProvider: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, provider: 'manual' }), expect: NOT_FOUND },
    },
    disconnectProjectPaymentProvider: {
      foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND },
    },
  },
});
