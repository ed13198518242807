import { describe, expect, it, vi } from 'vitest';
import { ProblemError } from '../../shared/errors.js';
import { MAX_ATTEMPTS, isLostRace, retryOnLostRace, revisionCondition } from '../../shared/store/optimistic.js';
import { ConditionFailedError, TransactionCanceledError } from '../../shared/store/store.js';

const lost = () => new ConditionFailedError();
const noWait = { waitMs: () => 0 };

describe('retryOnLostRace (read → decide → one transaction, again on a lost race)', () => {
  it('runs the change again after lost races and returns the first result that commits', async () => {
    const change = vi.fn(async (attempt: number) => {
      if (attempt < 3) throw lost();
      return `committed on ${attempt}`;
    });
    await expect(retryOnLostRace(change, noWait)).resolves.toBe('committed on 3');
    expect(change.mock.calls.map(([attempt]) => attempt)).toEqual([1, 2, 3]);
  });

  it(`gives up after ${MAX_ATTEMPTS} attempts with what exhausted() makes of the last lost race`, async () => {
    const change = vi.fn(async () => {
      throw new TransactionCanceledError(['None', 'TransactionConflict']);
    });
    const outcome = retryOnLostRace(change, {
      ...noWait,
      exhausted: () => new ProblemError('CONFLICT', 'Project p kept changing.'),
    });
    await expect(outcome).rejects.toMatchObject({ code: 'CONFLICT', detail: 'Project p kept changing.' });
    expect(change).toHaveBeenCalledTimes(MAX_ATTEMPTS);
  });

  it('lets any other error through at once, without waiting or trying again', async () => {
    const waitMs = vi.fn(() => 0);
    const change = vi.fn(async () => {
      throw new ProblemError('NOT_FOUND', 'No project p.');
    });
    await expect(retryOnLostRace(change, { waitMs, exhausted: () => new Error('not this') })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(change).toHaveBeenCalledTimes(1);
    expect(waitMs).not.toHaveBeenCalled();
  });

  it('honours its own attempts, retryable test and waits; the last lost attempt waits for nothing', async () => {
    const waitMs = vi.fn((_error: unknown, _attempt: number) => 0);
    const change = vi.fn(async (attempt: number) => {
      throw attempt % 2 ? new TransactionCanceledError(['ThrottlingError']) : lost();
    });
    const retryable = (error: unknown) =>
      isLostRace(error) || (error instanceof TransactionCanceledError && error.reasons.includes('ThrottlingError'));
    await expect(retryOnLostRace(change, { attempts: 3, retryable, waitMs })).rejects.toBeInstanceOf(
      TransactionCanceledError,
    );
    expect(change).toHaveBeenCalledTimes(3);
    expect(waitMs.mock.calls.map(([error, attempt]) => [(error as Error).constructor.name, attempt])).toEqual([
      ['TransactionCanceledError', 1],
      ['ConditionFailedError', 2],
    ]);
  });
});

describe('lost races and revisions', () => {
  it('counts failed conditions and transaction conflicts as lost races, not other cancellations', () => {
    expect(isLostRace(lost())).toBe(true);
    expect(isLostRace(new TransactionCanceledError(['None', 'TransactionConflict']))).toBe(true);
    expect(isLostRace(new TransactionCanceledError(['ValidationError']))).toBe(false);
    expect(isLostRace(new Error('timeout'))).toBe(false);
  });

  it('conditions a write on the revision read, or on there being none', () => {
    expect(revisionCondition({ pk: 'a', sk: 'b', revision: 7 })).toEqual({
      expression: 'revision = :read_revision',
      values: { ':read_revision': 7 },
    });
    expect(revisionCondition({ pk: 'a', sk: 'b' })).toEqual({
      expression: 'attribute_not_exists(revision)',
      values: {},
    });
  });
});
