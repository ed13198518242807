import { ProblemError } from '../../errors.js';
import { billingStore } from '../../store/billing.js';
import type { RequestGuard } from '../../store/request-scope.js';
import type { Store } from '../../store/store.js';
import { parseStoredBillingAccount } from './record.js';

/**
 * The billing lockdown of creator writes (DESIGN D20), kept apart from the billing repository so every
 * route bundle stays small. `invokeOperation` (shared/operations/invoke.ts), the one pipeline of every
 * surface, runs each write not marked `lockdown: 'exempt'` with {@link lockdownGuard}: a ConditionCheck
 * joined to the write's first transaction (no extra request, atomic with the effect), or one strongly
 * consistent read before a write that is not a transaction. Reads are never checked.
 */

/** The problem a locked team's creator write gets (402). */
function billingLocked(): ProblemError {
  return new ProblemError(
    'BILLING_LOCKED',
    'The team is locked because an invoice of its own tier is unpaid past the grace period; creator writes are refused until the open invoices are paid. Reads, billing and the subscriber side keep working.',
  );
}

/**
 * The guard of a team's creator writes: a ConditionCheck on the team's billing account item
 * (`keys.billingAccount`: absent, or `status` other than `locked`), or the same test by one read.
 * Only billing's own use cases write that item, and they are exempt, so no guarded transaction ever
 * holds a second operation on it. Errors: {@link billingLocked} (BILLING_LOCKED).
 */
export function lockdownGuard(teamId: string): RequestGuard {
  return {
    check: billingStore.notLockedCheck(teamId),
    problem: billingLocked,
    async verify(store: Store) {
      const account = await billingStore.readAccount(store, teamId);
      if (account && parseStoredBillingAccount(account).status === 'locked') throw billingLocked();
    },
  };
}
