/**
 * The pure comparisons of an access audit (DESIGN D34): Stripe's subscription against ours (Stripe is the truth for
 * money), a Discord member's roles against our entitlements and an entitled member's presence (ours are the truth for
 * access), and the stable ids of findings.
 */
import type Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import {
  findingIdOf,
  memberLeftFindingOf,
  roleFindingsOf,
  stripeFindingOf,
  type AuditedSubscription,
} from '../../shared/domain/access-audits/decisions.js';
import { Uuid } from '../../shared/schemas/common.js';

const START = 1_780_000_000;

function stripe(fields: Record<string, unknown> = {}): Stripe.Subscription {
  const item = {
    id: 'si_1',
    price: { id: 'price_1' },
    current_period_start: START,
    current_period_end: START + 86_400,
  };
  return {
    id: 'sub_1',
    customer: 'cus_1',
    status: 'active',
    cancel_at_period_end: false,
    cancel_at: null,
    pause_collection: null,
    start_date: START,
    created: START,
    trial_end: null,
    items: { data: [item] },
    ...fields,
  } as unknown as Stripe.Subscription;
}

const ours = (status: AuditedSubscription['status']): AuditedSubscription => ({
  id: '00000000-0000-4000-8000-000000000001',
  status,
  subscriber_id: '00000000-0000-4000-8000-000000000002',
  plan_id: '00000000-0000-4000-8000-000000000003',
});

describe('stripeFindingOf', () => {
  it('finds nothing where ours follows Stripe, and for what the import leaves out', () => {
    expect(stripeFindingOf(stripe(), ours('active'))).toBeNull();
    expect(stripeFindingOf(stripe({ status: 'trialing' }), ours('trialing'))).toBeNull();
    expect(stripeFindingOf(stripe({ cancel_at_period_end: true }), ours('pending_cancellation'))).toBeNull();
    expect(stripeFindingOf(stripe({ status: 'canceled' }), ours('canceled'))).toBeNull();
    expect(stripeFindingOf(stripe({ status: 'incomplete_expired' }), ours('expired'))).toBeNull();
    expect(stripeFindingOf(stripe({ status: 'incomplete' }), null)).toBeNull();
    expect(stripeFindingOf(stripe({ status: 'canceled' }), null)).toBeNull();
    expect(stripeFindingOf(stripe({ status: 'unpaid' }), null)).toBeNull();
  });

  it('a paid Stripe subscription we lack is paid_without_access, repaired by importing it', () => {
    expect(stripeFindingOf(stripe(), null)).toMatchObject({
      kind: 'paid_without_access',
      objects: { stripe_subscription_id: 'sub_1', stripe_customer_id: 'cus_1' },
      repair: { action: 'import_subscription' },
    });
    expect(stripeFindingOf(stripe({ status: 'past_due', customer: { id: 'cus_2' } }), null)?.objects).toMatchObject({
      stripe_customer_id: 'cus_2',
    });
  });

  it('compares a subscription of several items when exactly one item’s price makes a plan, as the import does', () => {
    const licensed = { interval: 'month', interval_count: 1, usage_type: 'licensed', trial_period_days: null };
    const planPrice = (id: string) => ({
      id,
      product: 'prod_1',
      currency: 'usd',
      unit_amount: 900,
      recurring: licensed,
    });
    const metered = { ...planPrice('price_metered'), recurring: { ...licensed, usage_type: 'metered' } };
    const items = (...prices: object[]) => ({
      items: { data: prices.map((price, index) => ({ id: `si_${index}`, price })) },
    });
    expect(stripeFindingOf(stripe(items(metered, planPrice('price_1'))), null)?.kind).toBe('paid_without_access');
    expect(stripeFindingOf(stripe(items(planPrice('price_1'), planPrice('price_2'))), null)).toBeNull();
  });

  it('names the kind by access: lost payment, missing access, or only the status; ours follows Stripe', () => {
    const kind = (fields: Record<string, unknown>, status: AuditedSubscription['status']) =>
      stripeFindingOf(stripe(fields), ours(status))?.kind;
    expect(kind({ status: 'canceled' }, 'active')).toBe('access_without_payment');
    expect(kind({ status: 'unpaid' }, 'past_due')).toBe('access_without_payment');
    expect(kind({ pause_collection: { behavior: 'void' } }, 'active')).toBe('access_without_payment');
    expect(kind({}, 'canceled')).toBe('paid_without_access');
    expect(kind({}, 'paused')).toBe('paid_without_access');
    expect(kind({ cancel_at_period_end: true }, 'active')).toBe('status_mismatch');
    expect(kind({ status: 'past_due' }, 'active')).toBe('status_mismatch');
    expect(stripeFindingOf(stripe({ status: 'canceled' }), ours('active'))).toMatchObject({
      objects: { subscription_id: ours('active').id, stripe_subscription_id: 'sub_1' },
      repair: { action: 'follow_stripe' },
    });
  });
});

describe('roleFindingsOf', () => {
  const paid = new Set(['r_gold', 'r_silver']);
  const member = (roleIds: string[], entitled: string[], subscriberId: string | null = 's1') => ({
    platformUserId: 'u1',
    roleIds,
    memberId: 'm1',
    subscriberId,
    entitledRoleIds: new Set(entitled),
  });
  const kinds = (found: ReturnType<typeof roleFindingsOf>) =>
    found.map((finding) => [finding.kind, finding.objects.platform_role_id, finding.repair.action]);

  it('finds nothing when the roles held are those the entitlement gives (other roles are not ours)', () => {
    expect(roleFindingsOf(member(['r_gold', 'r_other'], ['r_gold']), paid)).toEqual([]);
    expect(roleFindingsOf(member(['r_other'], [], null), paid)).toEqual([]);
  });

  it('a paid role without an entitlement is removed; an entitled role missing is given', () => {
    expect(kinds(roleFindingsOf(member(['r_gold'], [], null), paid))).toEqual([
      ['role_without_entitlement', 'r_gold', 'remove_role'],
    ]);
    expect(kinds(roleFindingsOf(member(['r_silver'], ['r_gold']), paid))).toEqual([
      ['role_without_entitlement', 'r_silver', 'remove_role'],
      ['role_missing', 'r_gold', 'grant_role'],
    ]);
    expect(roleFindingsOf(member(['r_gold'], [], null), paid)[0].detail).toContain('linked to no subscriber');
  });
});

describe('memberLeftFindingOf', () => {
  const member = { id: 'm1', platform_user_id: 'u1', status: 'joined' };
  it('an entitled member we hold as joined who is gone from the platform has left', () => {
    expect(memberLeftFindingOf(ours('active'), member, 'left')).toMatchObject({
      kind: 'member_left',
      objects: { member_id: 'm1', platform_user_id: 'u1', subscription_id: ours('active').id },
      repair: { action: 'grant_access' },
    });
    expect(memberLeftFindingOf(ours('trialing'), member, 'kicked')?.kind).toBe('member_left');
  });
  it('finds nothing when present, unknown, not entitled, or not joined in our records', () => {
    expect(memberLeftFindingOf(ours('active'), member, 'present')).toBeNull();
    expect(memberLeftFindingOf(ours('active'), member, 'unknown')).toBeNull();
    expect(memberLeftFindingOf(ours('canceled'), member, 'left')).toBeNull();
    expect(memberLeftFindingOf(ours('active'), { ...member, status: 'left' }, 'left')).toBeNull();
  });
});

describe('findingIdOf', () => {
  it('is a UUID, the same for the same audit, kind and subject, and differs otherwise', () => {
    const draft = { kind: 'role_missing' as const, objects: { platform_user_id: 'u1', platform_role_id: 'r1' } };
    const id = findingIdOf('a1', draft);
    expect(Uuid.safeParse(id).success).toBe(true);
    expect(findingIdOf('a1', { ...draft })).toBe(id);
    expect(findingIdOf('a2', draft)).not.toBe(id);
    expect(findingIdOf('a1', { ...draft, objects: { ...draft.objects, platform_role_id: 'r2' } })).not.toBe(id);
    expect(findingIdOf('a1', { ...draft, kind: 'role_without_entitlement' })).not.toBe(id);
  });
});
