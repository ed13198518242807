import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../../shared/clock.js';
import { MAX_ATTEMPTS } from '../../shared/store/optimistic.js';
import { TransactionCanceledError, createStore } from '../../shared/store/store.js';
import { unitOfWork } from '../../shared/store/unit-of-work.js';
import { startDynamoDbLocal } from '../../shared/store/dynamodb-local.js';
import { createTestStore } from '../support/store.js';

/**
 * A store whose document client answers each command with the next of `answers` (an Error rejects), counting the calls.
 */
function scriptedStore(answers: readonly (Error | object)[]) {
  let calls = 0;
  const document = {
    send: async () => {
      const answer = answers[Math.min(calls, answers.length - 1)];
      calls += 1;
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  const store = createStore({
    tableName: 't',
    deadLetterTableName: 'd',
    document: document,
    lockTimeoutWaitMs: { min: 1, max: 5 },
  });
  return { store, calls: () => calls };
}

/** DynamoDB Local's answer to an operation that waited too long for an item lock (AWS never gives it). */
const lockTimeout = () =>
  Object.assign(
    new Error(
      'This action timed out because it too long waiting for a lock. This request will succeed in actual DynamoDB API',
    ),
    { name: 'InternalServerError' },
  );

describe('store adapter', () => {
  it('reads a key given twice in one BatchGetItem once (DynamoDB refuses duplicate keys)', async () => {
    const store = await createTestStore();
    await store.put({ Item: { pk: 'TEST#a', sk: 'ITEM', value: 1 } });
    await store.put({ Item: { pk: 'TEST#b', sk: 'ITEM', value: 2 } });
    const items = await store.batchGet([
      { pk: 'TEST#a', sk: 'ITEM' },
      { pk: 'TEST#b', sk: 'ITEM' },
      { pk: 'TEST#a', sk: 'ITEM' },
    ]);
    expect(items.map((item) => item.value).sort()).toEqual([1, 2]);
  });
});

describe('the store’s requests', () => {
  /** A store whose document client records each command's class and input and answers `{}`. */
  function recordingStore() {
    const sent: Array<{ command: string; input: unknown }> = [];
    const document = {
      send: async (command: { input: unknown }) => {
        sent.push({ command: command.constructor.name, input: command.input });
        return {};
      },
    };
    return { store: createStore({ tableName: 'main-table', deadLetterTableName: 'dead-table', document }), sent };
  }

  it('reach DynamoDB as the matching command, `table` replaced by that table’s TableName and every other field as given', async () => {
    const { store, sent } = recordingStore();
    const condition = {
      ConditionExpression: 'attribute_not_exists(pk)',
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    } as const;
    await store.put({ Item: { pk: 'a', sk: 'b' }, ...condition });
    await store.update({
      table: 'deadLetter',
      Key: { pk: 'a', sk: 'b' },
      UpdateExpression: 'SET #v = :v',
      ExpressionAttributeNames: { '#v': 'v' },
      ExpressionAttributeValues: { ':v': 1 },
      ReturnValues: 'UPDATED_NEW',
    });
    await store.delete({ table: 'main', Key: { pk: 'a', sk: 'b' }, ReturnValues: 'ALL_OLD' });
    await store.query({
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': 'a' },
      Select: 'COUNT',
      Limit: 5,
      ScanIndexForward: false,
    });
    expect(sent).toEqual([
      { command: 'PutCommand', input: { TableName: 'main-table', Item: { pk: 'a', sk: 'b' }, ...condition } },
      {
        command: 'UpdateCommand',
        input: {
          TableName: 'dead-table',
          Key: { pk: 'a', sk: 'b' },
          UpdateExpression: 'SET #v = :v',
          ExpressionAttributeNames: { '#v': 'v' },
          ExpressionAttributeValues: { ':v': 1 },
          ReturnValues: 'UPDATED_NEW',
        },
      },
      {
        command: 'DeleteCommand',
        input: { TableName: 'main-table', Key: { pk: 'a', sk: 'b' }, ReturnValues: 'ALL_OLD' },
      },
      {
        command: 'QueryCommand',
        input: {
          TableName: 'main-table',
          IndexName: 'gsi1',
          KeyConditionExpression: 'gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': 'a' },
          Select: 'COUNT',
          Limit: 5,
          ScanIndexForward: false,
        },
      },
    ]);
  });

  it('convert each transaction item, on either table, to the element of one TransactWriteItems of the same kind', async () => {
    const { store, sent } = recordingStore();
    await store.transactWrite([
      { Put: { Item: { pk: 'p', sk: '1' } } },
      { Update: { table: 'deadLetter', Key: { pk: 'u', sk: '1' }, UpdateExpression: 'REMOVE x' } },
      { Delete: { Key: { pk: 'd', sk: '1' }, ConditionExpression: 'attribute_exists(pk)' } },
      {
        ConditionCheck: {
          Key: { pk: 'c', sk: '1' },
          ConditionExpression: 'attribute_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        },
      },
    ]);
    expect(sent).toEqual([
      {
        command: 'TransactWriteCommand',
        input: {
          TransactItems: [
            { Put: { TableName: 'main-table', Item: { pk: 'p', sk: '1' } } },
            { Update: { TableName: 'dead-table', Key: { pk: 'u', sk: '1' }, UpdateExpression: 'REMOVE x' } },
            {
              Delete: {
                TableName: 'main-table',
                Key: { pk: 'd', sk: '1' },
                ConditionExpression: 'attribute_exists(pk)',
              },
            },
            {
              ConditionCheck: {
                TableName: 'main-table',
                Key: { pk: 'c', sk: '1' },
                ConditionExpression: 'attribute_exists(pk)',
                ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              },
            },
          ],
        },
      },
    ]);
  });
});

describe('DynamoDB Local’s lock timeout', () => {
  it('reads as the transaction conflict AWS answers instead, so a transaction under load is retried by its caller rather than failing', async () => {
    const conflicted = scriptedStore([lockTimeout()]);
    const conflict = await conflicted.store
      .transactWrite([{ Put: { Item: { pk: 'a', sk: 'b' } } }])
      .catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(TransactionCanceledError);
    expect((conflict as TransactionCanceledError).reasons).toEqual(['TransactionConflict']);
    expect(conflicted.calls()).toBe(1);
    const otherFault = Object.assign(new Error('disk on fire'), { name: 'InternalServerError' });
    await expect(
      scriptedStore([otherFault]).store.transactWrite([{ Put: { Item: { pk: 'a', sk: 'b' } } }]),
    ).rejects.toBe(otherFault);
  });

  it('is retried for reads, single-item writes and queries, which AWS would have served (a hot rate counter, a redeemed code)', async () => {
    const read = scriptedStore([lockTimeout(), lockTimeout(), { Item: { pk: 'a', sk: 'b', value: 7 } }]);
    expect(await read.store.get({ pk: 'a', sk: 'b' })).toEqual({ pk: 'a', sk: 'b', value: 7 });
    expect(read.calls()).toBe(3);
    const write = scriptedStore([lockTimeout(), { Attributes: { count: 2 } }]);
    expect(
      await write.store.update({
        Key: { pk: 'a', sk: 'b' },
        UpdateExpression: 'ADD #c :one',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':one': 1 },
        ReturnValues: 'ALL_NEW',
      }),
    ).toEqual({ count: 2 });
    expect(write.calls()).toBe(2);
    const query = scriptedStore([lockTimeout(), { Items: [{ pk: 'a', sk: 'b' }] }]);
    expect(
      (await query.store.query({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'a' } }))
        .items,
    ).toHaveLength(1);
  });

  it('is not retried for ever, and other faults are not retried at all', async () => {
    const stuck = scriptedStore([lockTimeout()]);
    await expect(stuck.store.put({ Item: { pk: 'a', sk: 'b' } })).rejects.toBeInstanceOf(TransactionCanceledError);
    expect(stuck.calls()).toBe(9);
    const otherFault = Object.assign(new Error('disk on fire'), { name: 'InternalServerError' });
    const broken = scriptedStore([otherFault]);
    await expect(broken.store.get({ pk: 'a', sk: 'b' })).rejects.toBe(otherFault);
    expect(broken.calls()).toBe(1);
  });
});

describe('a unit of work whose transaction DynamoDB cancels for a concurrent one', () => {
  const twoWrites = (store: ReturnType<typeof scriptedStore>['store']) =>
    unitOfWork({ store, clock: manualClock(0), eventsCommitted: () => undefined }, 'team', (tx) => {
      tx.put({ pk: 'a', sk: '1' });
      tx.put({ pk: 'a', sk: '2' });
      return 'done';
    });

  it('sends the same transaction again (nothing was written) and returns once it commits', async () => {
    const scripted = scriptedStore([lockTimeout(), {}]);
    await expect(twoWrites(scripted.store)).resolves.toBe('done');
    expect(scripted.calls()).toBe(2);
  });

  it(`gives up after ${MAX_ATTEMPTS} cancelled attempts with the cancellation, for its caller's lost-race handling`, async () => {
    const scripted = scriptedStore([lockTimeout()]);
    await expect(twoWrites(scripted.store)).rejects.toBeInstanceOf(TransactionCanceledError);
    expect(scripted.calls()).toBe(MAX_ATTEMPTS);
  });
});

describe('DynamoDB Local with a data directory (DATA_DIR)', () => {
  it('creates a directory that does not exist yet, nested ones included, and starts on it', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'svc-data-'));
    const dataDirectory = join(parent, 'not', 'yet');
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const address = server.address();
        server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
      });
    });
    const local = await startDynamoDbLocal({ port, dataDirectory });
    try {
      expect(existsSync(dataDirectory)).toBe(true);
      const store = createStore({ endpoint: local.endpoint, tableName: 't', deadLetterTableName: 'd' });
      await expect(store.document.send(new ListTablesCommand({}))).resolves.toMatchObject({ TableNames: [] });
    } finally {
      await local.stop();
      rmSync(parent, { recursive: true, force: true });
    }
  });
});
