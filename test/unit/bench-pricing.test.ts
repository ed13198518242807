/**
 * How `npm run bench` prices a call's round trips (`bench/store-baseline.ts`): each request at its kind's raw p50, and
 * with transactions by size, each TransactWriteItems at the raw p50 of a transaction of its own item count.
 */
import { describe, expect, it } from 'vitest';
import { summarize } from '../../bench/measuring.js';
import {
  getUpdateRoundTripsMs,
  perCall,
  priceOfRequest,
  roundTripsBySizeMs,
  roundTripsMs,
  transactionSizesOf,
  type RawRequestLatency,
} from '../../bench/store-baseline.js';

const at = (ms: number) => summarize([ms]);
const raw: RawRequestLatency = {
  getItem: at(1),
  updateItem: at(1.5),
  batchGetItem: at(1.25),
  query: at(1.125),
  putItem: at(1.75),
  transactWriteItems: at(3),
  transactWriteItemsBySize: { 8: at(7.5) },
};

describe('bench round-trip prices', () => {
  // Two calls, each a BatchGetItem, an UpdateItem beside a PutItem, and one 8-item transaction.
  const commands = perCall({ BatchGetCommand: 2, UpdateCommand: 2, PutCommand: 2, TransactWriteCommand: 2 }, 2);

  it('prices each request at its kind, a transaction at the two-item price', () => {
    expect(roundTripsMs(commands, raw)).toBe(1.25 + 1.5 + 1.75 + 3);
    expect(getUpdateRoundTripsMs(commands, raw)).toBe(1 + 1.5 + 1.5 + 1.5);
  });

  it('prices a transaction at its own size when that size was measured, else at the two-item price', () => {
    expect(roundTripsBySizeMs(commands, perCall({ 8: 2 }, 2), raw)).toBe(1.25 + 1.5 + 1.75 + 7.5);
    expect(roundTripsBySizeMs(commands, perCall({ 5: 2 }, 2), raw)).toBe(1.25 + 1.5 + 1.75 + 3);
    expect(roundTripsBySizeMs(commands, {}, raw)).toBe(roundTripsMs(commands, raw));
  });

  it('prices one request at its kind, a transaction at its size when measured', () => {
    expect(priceOfRequest('Query', undefined, raw)).toBe(1.125);
    expect(priceOfRequest('TransactWrite', 8, raw)).toBe(7.5);
    expect(priceOfRequest('TransactWrite', 5, raw)).toBe(3);
    expect(priceOfRequest('Scan', undefined, raw)).toBe(1.125);
  });

  it('names each transaction size the calls sent once, smallest first', () => {
    expect(transactionSizesOf([{ transactionTotals: { 8: 1000 } }, { transactionTotals: { 3: 2, 8: 4 } }])).toEqual([
      3, 8,
    ]);
    expect(transactionSizesOf([{ transactionTotals: {} }])).toEqual([]);
  });
});
