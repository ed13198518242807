import { expect } from 'vitest';
import { listBillingInvoices } from '../../shared/domain/billing/reads.js';
import { NOT_FOUND, defineIsolationCases } from './cases.js';

/** Team B's invoice (both teams of the world are on `business`, whose move from free issued one). */
interface Seeded {
  bInvoice: { id: string; number: string };
}

export default defineIsolationCases<Seeded>({
  seed: async (runtime, w) => {
    const [bInvoice] = (await listBillingInvoices(runtime.store, w.b.team.id, { limit: 1 })).data;
    return { bInvoice };
  },
  secretsOfB: (extra) => [extra.bInvoice.id, extra.bInvoice.number],
  operations: {
    getBilling: {
      foreign: { input: () => ({}), expect: { ok: (body, _status, w) => expect(body.team_id).toBe(w.a.team.id) } },
    },
    listBillingInvoices: {
      foreign: {
        input: () => ({}),
        expect: {
          ok: (body, _status, w) =>
            expect(body.data.map((invoice: { team_id: string }) => invoice.team_id)).toEqual([w.a.team.id]),
        },
      },
    },
    getBillingInvoice: { foreign: { input: (_w, extra) => ({ id: extra.bInvoice.id }), expect: NOT_FOUND } },
    changeBillingTier: {
      foreign: {
        input: () => ({ tier: 'business' }),
        expect: { ok: (body, _status, w) => expect(body).toMatchObject({ team_id: w.a.team.id, tier: 'business' }) },
      },
    },
  },
});
