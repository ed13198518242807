/**
 * `npm run bench` part `audit-scale` (DESIGN D34): an access audit at size. Seeds N subscriptions (100,000 by default,
 * `BENCH_AUDIT_SUBSCRIPTIONS`) of one Stripe-billed project straight through the store adapters (the items the import
 * writes, built by the repositories' own functions on a recording transaction and written with BatchWriteItem), and
 * the matching N subscriptions in the loopback Stripe fake; plants a few drifts; then runs the audit as the queue runs
 * it, one `access_audit_page` message at a time, timing each chunk. Reports wall time, chunks, the longest chunk,
 * DynamoDB and Stripe requests per subscription, the findings (every planted drift must be found, nothing else) and
 * what a second audit requested while one runs gets.
 *
 * @module
 */
import { performance } from 'node:perf_hooks';
import type Stripe from 'stripe';
import { systemClock } from '../shared/clock.js';
import { ProblemError } from '../shared/errors.js';
import { createAccessAudit, getLatestAccessAudit } from '../shared/domain/access-audits/audits.js';
import { processAccessAuditPage } from '../shared/domain/access-audits/worker.js';
import {
  importedPlanId,
  planOfPrice,
  stateOfSubscription,
  subscriberOfCustomer,
} from '../shared/domain/imports/mapping.js';
import { STRIPE } from '../shared/domain/payments/stripe-event-context.js';
import { createPlan } from '../shared/domain/plans/creation.js';
import type { Plan } from '../shared/domain/plans/schema.js';
import { prepareSubscriber } from '../shared/domain/subscribers/repository.js';
import { addSubscriptionCreation } from '../shared/domain/subscriptions/creation.js';
import { importedSubscription } from '../shared/domain/subscriptions/imported.js';
import { putProviderCustomer, putProviderSubscriptionLink } from '../shared/store/payments/writes.js';
import { accessAuditStore } from '../shared/store/access-audits.js';
import type { Store } from '../shared/store/store.js';
import type { UnitOfWorkRuntime } from '../shared/store/unit-of-work.js';
import { applyFoldedUpdates, batchWrite, readsNothingStore, recordingTransaction } from './seeding.js';
import { stripeConnectedProject } from './audit.js';

/** Subscriptions recorded and written per seeding batch (bounds the memory the recorded items take). */
const SEED_BATCH = 2_000;
/** The queue worker's timeout on AWS (the delivery queue's dispatcher, `lib/webhooks.ts`), in seconds. */
export const WORKER_TIMEOUT_SECONDS = 30;

/** The drifts planted at the fake (no webhook), by the finding kind each must make. */
const PLANTED = ['access_without_payment', 'status_mismatch', 'paid_without_access'] as const;

/** One phase of the audit at size. */
interface AuditScalePhase {
  phase: string;
  chunks: number;
  seconds: number;
  longestChunkSeconds: number;
  dynamoDbRequests: number;
  stripeRequests: number;
}

/** What the audit at size measured. */
export interface AuditScaleFigures {
  subscriptions: number;
  stripeSubscriptions: number;
  seedSeconds: number;
  seconds: number;
  chunks: number;
  longestChunkSeconds: number;
  /** The longest chunk's share of {@link WORKER_TIMEOUT_SECONDS}. */
  longestChunkShare: number;
  dynamoDbRequests: number;
  stripeRequests: number;
  dynamoDbPerSubscription: number;
  stripePerSubscription: number;
  phases: AuditScalePhase[];
  planted: number;
  /** Findings by kind. */
  findings: Record<string, number>;
  /** Whether every planted drift was found with its kind and nothing else. */
  allFound: boolean;
  /** What `POST …/access-audits` answered while the audit ran (the problem code, or `accepted`). */
  secondAudit: string;
}

/**
 * The recurring prices of a seeded account as plans of the project, made as the import makes them (synced with the
 * price, its id derived from the project and the price).
 */
async function plansOfPrices(
  runtime: Parameters<typeof createPlan>[0],
  principal: Parameters<typeof createPlan>[1],
  projectId: string,
  prices: Stripe.Price[],
): Promise<Map<string, Plan>> {
  const plans = new Map<string, Plan>();
  for (const price of prices) {
    const made = planOfPrice(price);
    if ('skip' in made) continue;
    const imported = { planId: importedPlanId(projectId, price.id), provider: STRIPE, productId: made.productId };
    plans.set(
      price.id,
      await createPlan(runtime, principal, projectId, made.request, { imported: { ...imported, priceId: price.id } }),
    );
  }
  return plans;
}

/**
 * Seeds an audit of `subscriptions` Stripe subscriptions on `store` and runs it (see the module comment). Throws on any
 * error of the run.
 */
export async function measureAuditAtScale(options: {
  store: Store;
  subscriptions: number;
  progress: (line: string) => void;
}): Promise<AuditScaleFigures> {
  const clock = systemClock;
  const size = options.subscriptions;
  const { stripe, counting, runtime, team, project } = await stripeConnectedProject(options.store, 'Audited');
  const principal = team.principal;
  try {
    const seeded = stripe.seedAccount(size);
    // Every seeded subscription is one we hold: the ended and never-started states of the mix become active.
    for (const id of seeded.subscriptions) {
      const subscription = stripe.subscriptions.get(id)!;
      if (subscription.status === 'canceled' || subscription.status === 'incomplete')
        Object.assign(subscription, { status: 'active', canceled_at: null });
    }
    const plans = await plansOfPrices(
      runtime,
      principal,
      project.id,
      seeded.prices.map((id) => stripe.prices.get(id) as Stripe.Price),
    );

    options.progress(`audit-scale: seeding ${size.toLocaleString('en-US')} subscriptions (BatchWriteItem)`);
    const seedStarted = performance.now();
    const seedRuntime: UnitOfWorkRuntime = { store: readsNothingStore(options.store), clock, eventsCommitted() {} };
    const missing = seeded.subscriptions[2]; // planted: Stripe bills it, we have nothing
    for (let start = 0; start < size; start += SEED_BATCH) {
      const tx = recordingTransaction();
      for (const id of seeded.subscriptions.slice(start, start + SEED_BATCH)) {
        if (id === missing) continue;
        const stripeSubscription = stripe.subscriptions.get(id) as Stripe.Subscription;
        const customer = stripe.customers.get(stripeSubscription.customer as string) as Stripe.Customer;
        const item = stripeSubscription.items.data[0];
        const state = stateOfSubscription(stripeSubscription, item);
        if ('skip' in state) throw new Error(`seeded Stripe subscription ${id} is not importable: ${state.skip}`);
        const plan = plans.get(item.price.id)!;
        const prepared = await prepareSubscriber(seedRuntime, principal, project.id, subscriberOfCustomer(customer));
        putProviderCustomer(tx, principal.teamId, project.id, STRIPE, customer.id, prepared.subscriber.id);
        const subscription = importedSubscription(
          { projectId: project.id, subscriberId: prepared.subscriber.id, plan, provider: STRIPE, nowMs: clock.nowMs() },
          state,
        );
        putProviderSubscriptionLink(tx, principal.teamId, project.id, STRIPE, id, subscription.id);
        await addSubscriptionCreation(tx, seedRuntime, principal, {
          subscription,
          subscriber: prepared.subscriber,
          plan,
          accessCode: null,
          newSubscriber: prepared,
          providerSubscriptionId: id,
          imported: true,
        });
      }
      await batchWrite(options.store, tx.puts, 8);
      await applyFoldedUpdates(options.store, tx.updates, 8);
      if ((start / SEED_BATCH) % 5 === 4)
        options.progress(
          `audit-scale: ${(start + SEED_BATCH).toLocaleString('en-US')} seeded in ${Math.round((performance.now() - seedStarted) / 1000)} s`,
        );
    }
    const seedSeconds = (performance.now() - seedStarted) / 1000;

    // Drift at the fake, no webhook: a cancellation, a scheduled cancellation (and `missing`, never seeded as ours).
    Object.assign(stripe.subscriptions.get(seeded.subscriptions[0])!, { status: 'canceled' });
    stripe.subscriptions.get(seeded.subscriptions[1])!.cancel_at_period_end = true;

    options.progress(`audit-scale: auditing ${size.toLocaleString('en-US')} Stripe subscriptions against ours`);
    const stripeBefore = stripe.requests.length;
    counting.reset();
    const started = performance.now();
    const audit = await createAccessAudit(runtime, principal, project.id, {});
    const phases = new Map<string, AuditScalePhase>();
    let secondAudit = 'not tried';
    let chunks = 0;
    while (runtime.auditPages.length) {
      const message = runtime.auditPages.shift()!;
      const phase = (await latestPhase()) ?? 'stripe'; // a Stripe-billed project's first phase
      const requestsBefore = counting.requests();
      const stripeRequestsBefore = stripe.requests.length;
      const chunkStarted = performance.now();
      await processAccessAuditPage(runtime, message);
      const chunkSeconds = (performance.now() - chunkStarted) / 1000;
      const entry = phases.get(phase) ?? {
        phase,
        chunks: 0,
        seconds: 0,
        longestChunkSeconds: 0,
        dynamoDbRequests: 0,
        stripeRequests: 0,
      };
      phases.set(phase, {
        ...entry,
        chunks: entry.chunks + 1,
        seconds: entry.seconds + chunkSeconds,
        longestChunkSeconds: Math.max(entry.longestChunkSeconds, chunkSeconds),
        dynamoDbRequests: entry.dynamoDbRequests + counting.requests() - requestsBefore,
        stripeRequests: entry.stripeRequests + stripe.requests.length - stripeRequestsBefore,
      });
      if (++chunks === 1) secondAudit = await requestSecondAudit();
      if (chunks % 100 === 0) {
        const longest = Math.max(...[...phases.values()].map((each) => each.longestChunkSeconds));
        const elapsed = Math.round((performance.now() - started) / 1000);
        options.progress(
          `audit-scale: ${chunks} chunks (${phase}) in ${elapsed} s, longest ${longest.toFixed(2)} s, ${counting.requests()} DynamoDB requests`,
        );
      }
    }
    const seconds = (performance.now() - started) / 1000;
    const latest = await getLatestAccessAudit(runtime, principal, project.id, { limit: 50 });
    if (latest.status !== 'succeeded') throw new Error(`audit ${latest.status}: ${latest.error}`);
    const findings = Object.fromEntries(Object.entries(latest.counts).filter(([, count]) => count > 0));
    const expected = [
      [seeded.subscriptions[0], PLANTED[0]],
      [seeded.subscriptions[1], PLANTED[1]],
      [missing, PLANTED[2]],
    ];
    const allFound =
      latest.open_findings === PLANTED.length &&
      expected.every(([id, kind]) =>
        latest.findings.some((finding) => finding.kind === kind && finding.objects.stripe_subscription_id === id),
      );
    const dynamoDbRequests = [...phases.values()].reduce((sum, phase) => sum + phase.dynamoDbRequests, 0);
    const stripeRequests = stripe.requests.length - stripeBefore;
    const longestChunkSeconds = Math.max(...[...phases.values()].map((phase) => phase.longestChunkSeconds));
    return {
      subscriptions: latest.audited.subscriptions,
      stripeSubscriptions: latest.audited.stripe_subscriptions,
      seedSeconds,
      seconds,
      chunks,
      longestChunkSeconds,
      longestChunkShare: longestChunkSeconds / WORKER_TIMEOUT_SECONDS,
      dynamoDbRequests,
      stripeRequests,
      dynamoDbPerSubscription: dynamoDbRequests / size,
      stripePerSubscription: stripeRequests / size,
      phases: [...phases.values()],
      planted: PLANTED.length,
      findings,
      allFound,
      secondAudit,
    };

    /** The phase the audit's next chunk reads (its stored phase, read uncounted; null before its first chunk). */
    async function latestPhase(): Promise<string | null> {
      const job = await accessAuditStore.load(options.store, principal.teamId, project.id, audit.id);
      return job?.phase ?? null;
    }

    /** Asks for a second audit of the project while the first runs: the problem code, or `accepted`. */
    async function requestSecondAudit(): Promise<string> {
      try {
        await createAccessAudit(runtime, principal, project.id, {});
        return 'accepted';
      } catch (error) {
        if (error instanceof ProblemError)
          return error.message.startsWith(error.code) ? error.message : `${error.code}: ${error.message}`;
        throw error;
      }
    }
  } finally {
    await stripe.stop();
  }
}
