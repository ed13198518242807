import { emailSha256 } from '../../auth/principal.js';
import { entity, keys } from '../keys.js';
import type { Store } from '../store.js';
import type { Transaction } from '../unit-of-work.js';

/**
 * One trial per subscriber e-mail per project (DESIGN D33): a marker item per address (keyed by its SHA-256, trimmed
 * and in lower case, so no address sits in a key) that says the address had a trial in the project. Written in the
 * transaction that creates a trialing subscription; read before a trial checkout is offered.
 */
export const trialUseStore = {
  /**
   * Adds to `tx` the use of a trial by `email` in project `projectId` for `subscriptionId` at `atIso`. Never fails: the
   * first trial's subscription and time are kept, `trials` counts every trial the address started (a second one that
   * slipped through a race is recorded as it happened, not refused).
   */
  record(tx: Transaction, teamId: string, projectId: string, email: string, subscriptionId: string, atIso: string) {
    tx.update(keys.trialUse(teamId, projectId, emailSha256(email)), {
      expression:
        'SET entity = :entity, team_id = :team, subscription_id = if_not_exists(subscription_id, :subscription), first_trial_at = if_not_exists(first_trial_at, :at) ADD trials :one',
      values: {
        ':entity': entity.trialUse,
        ':team': teamId,
        ':subscription': subscriptionId,
        ':at': atIso,
        ':one': 1,
      },
    });
  },

  /** Whether `email` (compared trimmed and in lower case) had a trial in project `projectId` (strongly consistent). */
  async hadTrial(store: Store, teamId: string, projectId: string, email: string): Promise<boolean> {
    return (await store.get(keys.trialUse(teamId, projectId, emailSha256(email)))) !== undefined;
  },
};
