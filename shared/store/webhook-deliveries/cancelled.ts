import { ConditionFailedError, TransactionCanceledError } from '../store.js';

/**
 * True for a failed condition and for a cancelled transaction (a condition, or a conflict with another
 * transaction): the delivery writes treat both as "someone else got there first".
 */
export function isCancelled(error: unknown): boolean {
  return error instanceof ConditionFailedError || error instanceof TransactionCanceledError;
}
