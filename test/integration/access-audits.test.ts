/**
 * Access audits, Stripe side (DESIGN D34): an imported Stripe account drifts on purpose — a subscription canceled at
 * Stripe while its webhook is dropped, a cancellation scheduled at Stripe unseen, a Stripe subscription we never heard
 * of — and the audit finds each with the right kind; `repair` makes ours follow Stripe (only GETs reach Stripe) and a
 * second audit finds nothing. One audit of a project runs at a time (409 names it); a lost page message resumes; the
 * `repair` policy repairs as it finds; another team's token gets 404.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { restartStalledAccessAudits } from '../../shared/domain/access-audits/restart.js';
import { processAccessAuditPage } from '../../shared/domain/access-audits/worker.js';
import { processImportPage } from '../../shared/domain/imports/worker.js';
import { SWEEP_GRACE_MS } from '../../shared/domain/webhook-deliveries/policy.js';
import { keys } from '../../shared/store/keys.js';
import { caller } from '../support/calls.js';
import {
  call,
  clock,
  ok,
  projectId,
  runtime,
  seeded,
  stripeApi,
  team,
  useStripeAccountFixture,
} from '../support/fixtures/stripe-account.js';
import { seedTeam } from '../support/store.js';

useStripeAccountFixture({ customers: 16 });

beforeEach(async () => {
  await ok('POST', `/v1/projects/${projectId}/imports`, { source: 'stripe' }, 202);
  while (runtime.importPages.length) await processImportPage(runtime, runtime.importPages.shift()!);
  clock.advance(60_000);
});

const audits = () => `/v1/projects/${projectId}/access-audits`;

/** Starts an audit (202) and runs its page messages until none is left; answers the latest audit. */
async function runAudit(body: Record<string, unknown> = {}) {
  const audit = await ok('POST', audits(), body, 202);
  expect(audit).toMatchObject({ status: 'queued', project_id: projectId });
  while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
  const latest = await ok('GET', `${audits()}/latest`);
  expect(latest).toMatchObject({ id: audit.id, status: 'succeeded' });
  return latest;
}

/** Our subscription linked to Stripe subscription `stripeId`, or undefined. */
async function ours(stripeId: string) {
  const link = await runtime.store.get(keys.providerSubscription(team.team.id, projectId, 'stripe', stripeId));
  return link ? ok('GET', `/v1/subscriptions/${String(link.subscription_id)}`) : undefined;
}

const noFindings = {
  paid_without_access: 0,
  access_without_payment: 0,
  role_missing: 0,
  role_without_entitlement: 0,
  status_mismatch: 0,
  member_left: 0,
};

/** Makes three drifts at the fake, no webhook delivered: a cancellation, a scheduled cancellation, an unknown one. */
function drift() {
  const canceled = stripeApi.subscriptions.get(seeded.subscriptions[0])!;
  Object.assign(canceled, { status: 'canceled', canceled_at: Math.floor(clock.nowMs() / 1000) });
  stripeApi.subscriptions.get(seeded.subscriptions[8])!.cancel_at_period_end = true;
  const unknown = stripeApi.addSubscription('sub_unknown', {
    priceId: seeded.prices[0],
    customer: seeded.customers[1],
  });
  unknown.start_date = unknown.created;
  unknown.items.data[0].current_period_start = unknown.created;
  unknown.items.data[0].current_period_end = unknown.created + 30 * 86_400;
  return { canceled: seeded.subscriptions[0], scheduled: seeded.subscriptions[8], unknown: 'sub_unknown' };
}

describe('access audits: Stripe against ours', () => {
  it('finds nothing on an account just imported', async () => {
    const latest = await runAudit();
    expect(latest.counts).toEqual(noFindings);
    expect(latest).toMatchObject({ open_findings: 0, findings: [], policy: 'report', trigger: 'request' });
    expect(latest.audited).toMatchObject({ stripe_subscriptions: 16, subscriptions: 12 });
  });

  it('finds drift made on purpose with the right kinds, and each repair makes ours follow Stripe', async () => {
    const made = drift();
    const latest = await runAudit();
    expect(latest.counts).toEqual({
      ...noFindings,
      access_without_payment: 1,
      status_mismatch: 1,
      paid_without_access: 1,
    });
    expect(latest.open_findings).toBe(3);
    const byKind = Object.fromEntries(latest.findings.map((finding: { kind: string }) => [finding.kind, finding]));
    expect(byKind.access_without_payment).toMatchObject({
      status: 'open',
      objects: { stripe_subscription_id: made.canceled, subscription_id: (await ours(made.canceled)).id },
      repair: { action: 'follow_stripe' },
    });
    expect(byKind.status_mismatch.objects.stripe_subscription_id).toBe(made.scheduled);
    expect(byKind.paid_without_access).toMatchObject({
      objects: { stripe_subscription_id: made.unknown, stripe_customer_id: seeded.customers[1], subscription_id: null },
      repair: { action: 'import_subscription' },
    });

    for (const finding of latest.findings) {
      const repaired = await ok('POST', `${audits()}/findings/${finding.id}/repair`, undefined, 200);
      expect(repaired).toMatchObject({ id: finding.id, status: 'repaired', repair_error: null });
    }
    expect(await ours(made.canceled)).toMatchObject({ status: 'canceled', has_access: false });
    expect(await ours(made.scheduled)).toMatchObject({ status: 'pending_cancellation' });
    expect(await ours(made.unknown)).toMatchObject({ status: 'active', payment_provider: 'stripe' });
    expect((await ok('GET', `${audits()}/latest`)).open_findings).toBe(0);
    // A repaired finding asked again is answered as it is.
    await ok('POST', `${audits()}/findings/${latest.findings[0].id}/repair`, undefined, 200);

    clock.advance(60_000);
    expect((await runAudit()).counts).toEqual(noFindings);
    // Nothing was charged or changed at Stripe: the audit and its repairs only read.
    expect(stripeApi.requests.filter((request) => request.method !== 'GET')).toEqual([]);
  });

  it('under the repair policy repairs what it finds, and keeps the policy for the next audit', async () => {
    const made = drift();
    const latest = await runAudit({ policy: 'repair' });
    expect(latest).toMatchObject({ policy: 'repair', open_findings: 0 });
    expect(latest.findings.map((finding: { status: string }) => finding.status)).toEqual([
      'repaired',
      'repaired',
      'repaired',
    ]);
    expect(await ours(made.canceled)).toMatchObject({ status: 'canceled' });
    clock.advance(60_000);
    expect(await runAudit()).toMatchObject({ policy: 'repair', counts: noFindings });
  });

  it('runs one audit of a project at a time: a second one while it runs gets 409 naming it', async () => {
    const [first, second] = await Promise.all([call('POST', audits(), {}), call('POST', audits(), {})]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([202, 409]);
    const running = first.status === 202 ? first.json : second.json;
    const refused = first.status === 409 ? first.json : second.json;
    expect(refused).toMatchObject({ code: 'CONFLICT' });
    expect(refused.detail).toContain(running.id);
    expect((await call('POST', audits(), {})).status).toBe(409);
    while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    await ok('POST', audits(), {}, 202);
  });

  it('starts when the audit that refused the start ends before the refusal is read', async () => {
    const first = await ok('POST', audits(), {}, 202);
    const transactWrite = runtime.store.transactWrite.bind(runtime.store);
    let refusals = 0;
    vi.spyOn(runtime.store, 'transactWrite').mockImplementation(async (items) => {
      try {
        await transactWrite(items);
      } catch (error) {
        // The running audit ends right after it refused the start, before the refusal is read.
        if (refusals++ === 0)
          while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
        throw error;
      }
    });
    const second = await ok('POST', audits(), {}, 202);
    expect(refusals).toBe(1);
    expect(second.id).not.toBe(first.id);
    expect(await ok('GET', `${audits()}/latest`)).toMatchObject({ id: second.id, status: 'queued' });
  });

  it('resumes after a lost page message, and a page delivered twice counts once', async () => {
    drift();
    const audit = await ok('POST', audits(), {}, 202);
    const first = runtime.auditPages.shift()!;
    const outcomes = await Promise.all([
      processAccessAuditPage(runtime, first),
      processAccessAuditPage(runtime, { ...first }),
    ]);
    expect(outcomes.sort()).toEqual(['audit_page', 'skipped']);
    runtime.auditPages.length = 0; // the next page's message is lost
    const stalled = await ok('GET', `${audits()}/latest`);
    expect(stalled).toMatchObject({ id: audit.id, status: 'running', open_findings: 3 });
    expect((await call('POST', audits(), {})).status).toBe(409);
    clock.advance(SWEEP_GRACE_MS + 1);
    expect(await restartStalledAccessAudits(runtime, clock.nowMs() - SWEEP_GRACE_MS)).toBe(1);
    while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
    const done = await ok('GET', `${audits()}/latest`);
    expect(done).toMatchObject({ status: 'succeeded', open_findings: 3 });
    expect(done.audited).toMatchObject({ stripe_subscriptions: 17, subscriptions: 12 });
    expect(await restartStalledAccessAudits(runtime, clock.nowMs())).toBe(0);
  });

  it('another team’s token gets 404; a project never audited has no latest audit', async () => {
    drift();
    const latest = await runAudit();
    const other = await seedTeam(runtime.store, clock);
    const foreign = caller(() => ({ runtime, token: other.token }));
    expect((await foreign.call('GET', `${audits()}/latest`)).status).toBe(404);
    expect((await foreign.call('POST', audits(), {})).status).toBe(404);
    expect((await foreign.call('POST', `${audits()}/findings/${latest.findings[0].id}/repair`)).status).toBe(404);
    const fresh = (await ok('POST', '/v1/projects', { name: 'Fresh', platform_type: 'web' }, 201)).id as string;
    expect((await call('GET', `/v1/projects/${fresh}/access-audits/latest`)).status).toBe(404);
    expect((await call('POST', `${audits()}/findings/${crypto.randomUUID()}/repair`)).status).toBe(404);
  });
});
