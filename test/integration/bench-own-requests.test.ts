/**
 * The bench's price of a call's own requests (bench/own-requests.ts): a captured call's DynamoDB requests, sent again
 * round after round on the items as they were before the call, all succeed (their conditions see the same items), and
 * the table ends as the call left it.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { captureCall, replayOwnRequests } from '../../bench/own-requests.js';
import { rawRequestSet, summarizeRawRounds, timeRawRound } from '../../bench/store-baseline.js';
import { rest } from '../support/calls.js';
import { createProjectCall, runtime, useIdempotencyFixture } from '../support/fixtures/idempotency.js';
import { scanTable } from '../support/guarantees.js';

useIdempotencyFixture();

describe('own requests sent raw (bench)', () => {
  it('replays a write call’s requests, conditions included, and leaves the table as the call left it', async () => {
    let status = 0;
    const captured = await captureCall(runtime.store.document, async () => {
      status = (await rest(runtime, createProjectCall(randomUUID()))).status;
    });
    expect(status).toBe(201);
    // The idempotency claim and the project's transaction are conditional on items that did not exist before the call.
    expect(captured.commands.map((command) => command.constructor.name)).toEqual(
      expect.arrayContaining(['PutCommand', 'TransactWriteCommand']),
    );
    expect(captured.written.some((item) => item.before === undefined)).toBe(true);
    const afterCall = await scanTable(runtime.store);

    let between = 0;
    const replayed = await replayOwnRequests(runtime.store.document, captured, 3, async () => void between++);

    expect(replayed).toMatchObject({ requests: captured.commands.length, samples: 3, failures: 0 });
    expect(between).toBe(3);
    expect(replayed.ms).toBeGreaterThan(0);
    expect(await scanTable(runtime.store)).toEqual(afterCall);
  });

  it('counts a request the replay cannot reproduce as failed', async () => {
    const captured = await captureCall(runtime.store.document, async () => {
      await rest(runtime, createProjectCall(randomUUID()));
    });
    // Forget that the call created its items: each round then meets them already there, and their conditions fail.
    const replayed = await replayOwnRequests(
      runtime.store.document,
      { ...captured, written: captured.written.filter((item) => item.before !== undefined) },
      2,
    );
    expect(replayed.failures).toBeGreaterThan(0);
  });

  it('times one raw request of each kind a round, a transaction of each size on that many distinct items', async () => {
    const set = await rawRequestSet(runtime.store, [8]);
    const rounds = [await timeRawRound(set), await timeRawRound(set)];

    const counters = (await scanTable(runtime.store))
      .filter((item) => String(item.pk).startsWith('BENCH#RAW#') && !String(item.pk).includes('#PUT#'))
      .map((item) => Number(item.counter))
      .sort((a, b) => a - b);
    // Per round: the UpdateItem and both transactions change the first item, both transactions the second, the 8-item
    // one the six others.
    expect(counters).toEqual([2, 2, 2, 2, 2, 2, 4, 6]);
    const prices = summarizeRawRounds(rounds);
    expect(Object.keys(prices.transactWriteItemsBySize)).toEqual(['8']);
    for (const latency of [
      prices.getItem,
      prices.putItem,
      prices.transactWriteItems,
      prices.transactWriteItemsBySize[8],
    ])
      expect(latency).toMatchObject({ count: 2, p50: expect.any(Number) });
  });
});
