import { expect } from 'vitest';
import { recordPayment } from '../../shared/domain/payments/recording.js';
import { createPlan } from '../../shared/domain/plans/creation.js';
import { connectPaymentProvider } from '../../shared/domain/projects/payment-provider.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** Team B's project with a paid subscription in SEK (a currency no other case uses). */
const SECRET_CURRENCY = 'SEK';

/**
 * Team A's token against team B's metrics: B's project answers NOT_FOUND; A's team figures hold none of B's
 * (its SEK revenue and MRR). The scoped token: A's other project NOT_FOUND, the team's figures team-wide.
 */
export default defineIsolationCases<{ bProjectId: string }>({
  seed: async (runtime, w) => {
    const project = await createProject(runtime, w.b.principal, {
      name: 'B secret metrics',
      platform_type: 'telegram',
    });
    await connectPaymentProvider(runtime, w.b.principal, project.id, { provider: 'manual' });
    const plan = await createPlan(runtime, w.b.principal, project.id, {
      name: 'B secret SEK plan',
      amount: 4_242,
      currency: SECRET_CURRENCY,
      interval: 'month',
    });
    const subscriber = await createSubscriber(runtime, w.b.principal, project.id, {
      display_name: 'B metrics payer',
      consent: false,
    });
    await recordPayment(runtime, w.b.principal, project.id, {
      subscriber_id: subscriber.id,
      plan_id: plan.id,
      status: 'succeeded',
    });
    return { bProjectId: project.id };
  },
  secretsOfB: (extra) => [extra.bProjectId],
  operations: {
    getProjectMetrics: { foreign: { input: (_w, extra) => ({ project_id: extra.bProjectId }), expect: NOT_FOUND } },
    getTeamMetrics: {
      foreign: {
        input: () => ({}),
        expect: {
          ok: (body) => {
            expect(body.project_id).toBeNull();
            const currencies = [...body.mrr, ...body.last_30_days.revenue].map(
              (amount: { currency: string }) => amount.currency,
            );
            expect(currencies).not.toContain(SECRET_CURRENCY);
          },
        },
      },
    },
  },
});
