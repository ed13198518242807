import { ProblemError } from '../../errors.js';
import { keys } from '../../store/keys.js';
import type { RequestGuard } from '../../store/request-scope.js';
import type { Store } from '../../store/store.js';

/**
 * The billing lockdown of creator writes (DESIGN D20), kept apart from the billing repository so that
 * every route bundle (whose pipeline imports it) stays small.
 *
 * Where it is enforced: the REST and MCP pipelines (`shared/http/rest-pipeline.ts`,
 * `shared/mcp/tools.ts`) — the one path every operation takes, and the one the dashboard runs its
 * operations through too — open a request scope for every write whose definition is not marked
 * `lockdown: 'exempt'` (billing itself, the subscriber side), carrying {@link lockdownGuard}, and hand
 * the handler a store wrapped by `guardedStore`. Why a ConditionCheck rather than a read: a write's
 * first transaction already carries the request's idempotency completion and activity entry, so one
 * more item in it costs no DynamoDB request and is atomic with the effect (a team locked a millisecond
 * before the commit still gets BILLING_LOCKED, never a half-done write). The few use cases that write
 * one item without a transaction (UpdateItem with `ReturnValues`: endpoint changes, token revocation…)
 * pay one strongly consistent GetItem of the billing item instead; reads, GET routes and read-only tools
 * are never checked.
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
    check: {
      ConditionCheck: {
        Key: keys.billingAccount(teamId),
        ConditionExpression: 'attribute_not_exists(#status) OR #status <> :locked',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: { ':locked': 'locked' },
      },
    },
    problem: billingLocked,
    async verify(store: Store) {
      const account = await store.get(keys.billingAccount(teamId));
      if (account?.status === 'locked') throw billingLocked();
    },
  };
}
