import type { caller } from './calls.js';

/** The plan the platform tests subscribe members to: 9.00 EUR a month. */
const MONTHLY_PLAN = { name: 'Monthly', amount: 900, currency: 'EUR', interval: 'month' } as const;

/** Creates {@link MONTHLY_PLAN} in project `projectId` through the REST caller `call`; answers the reply's body. */
export async function createMonthlyPlan(
  call: ReturnType<typeof caller>['call'],
  projectId: string,
): Promise<{ id: string } & Record<string, any>> {
  return (await call('POST', `/v1/projects/${projectId}/plans`, MONTHLY_PLAN)).json;
}
