/**
 * What a join page view costs and how fresh it is (DESIGN D26): DynamoDB requests counted at the store (not timed),
 * and a plan deactivated more than 60 s before a view is not on it.
 */

import { describe, expect, it } from 'vitest';
import { setPlanStatus } from '../../shared/domain/plans/changes.js';
import { countingStore } from '../support/store.js';
import { clock, openJoinPage, plan, runtime, team, usePublicPagesFixture } from '../support/fixtures/public-pages.js';

usePublicPagesFixture();

/** Counts the DynamoDB requests the runtime's store sends from now on. */
function countRequests(): () => number {
  const counting = countingStore(runtime.store);
  runtime.store = counting.store;
  return () => counting.requests();
}

describe('a join page view', () => {
  it('costs 3 DynamoDB requests: the per-IP counter, the team and project in one BatchGetItem, the plans in one Query (a first view also finds the project’s team)', async () => {
    await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    await plan({ name: 'Monthly reader', amount: 900, currency: 'EUR', interval: 'month' });
    const requests = countRequests();

    const first = await openJoinPage();
    expect(first.page.statusCode).toBe(200);
    expect(first.page.body).toContain('Monthly reader');
    expect(requests()).toBe(4);

    for (let view = 1; view <= 3; view += 1) {
      const again = await openJoinPage();
      expect(again.page.statusCode).toBe(200);
      expect(again.page.body).toContain('Free readers');
      expect(again.page.body).toContain('Monthly reader');
      expect(requests()).toBe(4 + 3 * view);
    }
  });

  it('does not show a plan deactivated more than 60 s ago', async () => {
    await plan({ name: 'Free readers', amount: 0, currency: 'EUR', interval: 'month' });
    const closing = await plan({ name: 'Closing plan', amount: 0, currency: 'EUR', interval: 'year' });
    expect((await openJoinPage()).page.body).toContain('Closing plan');

    await setPlanStatus(runtime, team.principal, closing.id, 'inactive');
    clock.advance(60_001);

    const { page } = await openJoinPage();
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Free readers');
    expect(page.body).not.toContain('Closing plan');
  });
});
