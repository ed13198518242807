import type { Principal } from '../../auth/principal.js';
import type { Ability } from '../../catalogues/abilities.js';
import { ProblemError } from '../../errors.js';
import { isTransactionConflict, retryOnLostRace } from '../../store/optimistic.js';

/**
 * Rules shared by roles, groups and team members (DESIGN D19): nobody grants more than they hold, and
 * names are unique per team whatever their case.
 */

/** The form a role or group name is compared in (NFKC, trimmed, lower case): names unique in any case. */
export function normalizeName(name: string): string {
  return name.normalize('NFKC').trim().toLowerCase();
}

/**
 * Throws TOKEN_MISSING_ABILITY naming every ability of `abilities` the caller lacks (DESIGN D2, D19: a
 * role, a role assignment or a group never reaches beyond the caller's own abilities). `what` says what
 * was being granted, for the detail (e.g. "role Editors").
 */
export function requireGrantable(principal: Principal, abilities: Iterable<Ability>, what: string): void {
  const missing = [...new Set(abilities)].filter((ability) => !principal.abilities.has(ability));
  if (missing.length) {
    throw new ProblemError(
      'TOKEN_MISSING_ABILITY',
      `You can only grant abilities you hold; ${what} needs: ${missing.join(', ')}.`,
    );
  }
}

/** The distinct values of `values`, in first-seen order. */
export function distinct<T>(values: readonly T[]): T[] {
  return [...new Set(values)];
}

/** `next` minus `previous` and `previous` minus `next`: what a list replacement adds and removes. */
export function difference<T>(previous: readonly T[], next: readonly T[]): { added: T[]; removed: T[] } {
  return {
    added: next.filter((value) => !previous.includes(value)),
    removed: previous.filter((value) => !next.includes(value)),
  };
}

/**
 * A write lost a race on an object's version (another request changed it between the read and the
 * transaction): CONFLICT, which {@link retryLostRaces} retries by running the use case again.
 */
export class ConcurrentChange extends ProblemError {
  constructor(detail: string) {
    super('CONFLICT', detail);
  }
}

/** How many times a use case runs before a lost race is answered with CONFLICT. */
const RACE_ATTEMPTS = 3;

/**
 * Runs a use case that reads, then writes in one transaction (DESIGN D14), again when it lost a race:
 * a {@link ConcurrentChange}, or DynamoDB cancelling the transaction because another one was changing
 * the same items (`TransactionConflict`). Nothing was written by a lost attempt, so running again is
 * safe (a request's idempotency items go with the attempt that commits). After {@link RACE_ATTEMPTS}
 * attempts: the ConcurrentChange, or CONFLICT for a transaction conflict.
 */
export async function retryLostRaces<T>(useCase: () => Promise<T>): Promise<T> {
  return retryOnLostRace(useCase, {
    attempts: RACE_ATTEMPTS,
    retryable: (error) => isTransactionConflict(error) || error instanceof ConcurrentChange,
    waitMs: () => 0,
    exhausted: (error) =>
      isTransactionConflict(error)
        ? new ProblemError(
            'CONFLICT',
            'Other requests kept changing the same objects at the same moment; read them again and retry.',
          )
        : (error as Error),
  });
}
