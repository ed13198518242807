import { describe, expect, it } from 'vitest';
import { createTestStore } from '../support/store.js';

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
