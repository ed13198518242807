import type { Principal } from '../../shared/auth/principal.js';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import type { Runtime } from '../../shared/runtime.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** A consented subscriber who joined the community (so ban, unban and kick would all act if reachable). */
interface Seeded {
  subscriberId: string;
  memberId: string;
  email: string;
  name: string;
}

async function seedSubscriber(runtime: Runtime, principal: Principal, projectId: string, tag: string): Promise<Seeded> {
  const email = `${tag}-secret-subscriber@example.com`;
  const name = `Subscriber ${tag} secret name`;
  const subscriber = await createSubscriber(runtime, principal, projectId, {
    display_name: name,
    email,
    consent: true,
    platform_user_id: `${tag}-platform-user`,
  });
  const member = await recordPlatformMembership(runtime, {
    teamId: principal.teamId,
    projectId,
    platformUserId: `${tag}-platform-user`,
    change: 'joined',
    username: `${tag}_user`,
  });
  return { subscriberId: subscriber.id, memberId: member!.id, email, name };
}

export default defineIsolationCases<{ b: Seeded; aOther: Seeded }>({
  seed: async (runtime, w) => ({
    b: await seedSubscriber(runtime, w.b.principal, w.b.project.id, 'bteam'),
    aOther: await seedSubscriber(runtime, w.a.principal, w.a.otherProject.id, 'aother'),
  }),
  secretsOfB: (extra) => [
    extra.b.subscriberId,
    extra.b.memberId,
    extra.b.email,
    extra.b.name,
    'bteam-platform-user',
    'bteam_user',
  ],
  operations: {
    listSubscribers: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    createSubscriber: {
      foreign: {
        input: (w) => ({
          project_id: w.b.project.id,
          display_name: 'Intruder',
          platform_user_id: 'bteam-platform-user',
        }),
        expect: NOT_FOUND,
      },
    },
    exportSubscribers: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    getSubscriber: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriberId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriberId }), expect: NOT_FOUND },
    },
    updateSubscriber: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriberId, display_name: 'Hijacked' }), expect: NOT_FOUND },
      scoped: {
        input: (_w, extra) => ({ id: extra.aOther.subscriberId, display_name: 'Hijacked' }),
        expect: NOT_FOUND,
      },
    },
    banSubscriber: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriberId, reason: 'hostile' }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriberId }), expect: NOT_FOUND },
    },
    unbanSubscriber: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriberId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriberId }), expect: NOT_FOUND },
    },
    kickSubscriber: {
      foreign: { input: (_w, extra) => ({ id: extra.b.subscriberId }), expect: NOT_FOUND },
      scoped: { input: (_w, extra) => ({ id: extra.aOther.subscriberId }), expect: NOT_FOUND },
    },
  },
});
