/**
 * `npm run bench` parts `import` and `audit` (DESIGN D34), against the loopback Stripe fake: the Stripe import of an
 * account of N customers (each with one subscription in a mix of statuses), timed page by page through the import
 * worker (subscriptions imported per second); then an access audit of the imported project with a few drifts made at
 * the fake, counting the DynamoDB requests and the Stripe requests per audited Stripe subscription.
 *
 * @module
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { systemClock } from '../shared/clock.js';
import { localKeyEncryptionKey } from '../shared/credentials/local-key.js';
import { createAccessAudit, getLatestAccessAudit } from '../shared/domain/access-audits/audits.js';
import { processAccessAuditPage } from '../shared/domain/access-audits/worker.js';
import { createImport, getImport } from '../shared/domain/imports/imports.js';
import { processImportPage } from '../shared/domain/imports/worker.js';
import { createProject } from '../shared/domain/projects/creation.js';
import { connectPaymentProvider } from '../shared/domain/projects/payment-provider.js';
import { ConnectPaymentProviderRequest } from '../shared/domain/projects/schema.js';
import type { Store } from '../shared/store/store.js';
import { countingStore, createTestRuntime, seedTeam } from '../test/support/store.js';
import { startFakeStripeApi } from '../test/support/stripe-api.js';
import { connectStripe } from '../test/support/stripe.js';

/** What the import bench measured. */
export interface ImportFigures {
  customers: number;
  subscriptions: number;
  seconds: number;
  subscriptionsPerSecond: number;
  stripeRequests: number;
  dynamoDbRequests: number;
  /** DynamoDB requests per subscription imported (every request of the job: plans, customers, subscriptions). */
  dynamoDbPerSubscription: number;
  /** Stripe requests per subscription imported (list pages of Prices, Customers and Subscriptions). */
  stripePerSubscription: number;
}

/** What the audit bench measured. */
export interface AuditFigures {
  stripeSubscriptions: number;
  subscriptions: number;
  findings: number;
  seconds: number;
  pages: number;
  dynamoDbRequests: number;
  stripeRequests: number;
  dynamoDbPerStripeSubscription: number;
  stripePerStripeSubscription: number;
}

/**
 * Imports a fake Stripe account of `customers` customers into a new team's project on `store`, then audits it with
 * three drifts made at the fake (no webhook); returns both figures. Throws on any error of the run.
 */
/**
 * A web project connected to a fresh loopback Stripe fake, on a runtime over a request-counting view of `store` (the
 * wall clock): what the import and audit parts measure on. The caller stops `stripe`.
 */
export async function stripeConnectedProject(store: Store, projectName: string) {
  const clock = systemClock;
  const stripe = await startFakeStripeApi({ nowMs: () => clock.nowMs() });
  const counting = countingStore(store);
  const runtime = await createTestRuntime({ clock, store: counting.store });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: stripe.url,
    retry: { retries: 1, minTimeoutMs: 0 },
  };
  const team = await seedTeam(store, clock);
  const project = await createProject(runtime, team.principal, { name: projectName, platform_type: 'web' });
  await connectStripe(
    stripe,
    (_path, body) =>
      connectPaymentProvider(runtime, team.principal, project.id, ConnectPaymentProviderRequest.parse(body)),
    project.id,
  );
  return { stripe, counting, runtime, team, project };
}

export async function measureImportAndAudit(options: {
  store: Store;
  customers: number;
  progress: (line: string) => void;
}): Promise<{ importing: ImportFigures; audit: AuditFigures }> {
  const { stripe, counting, runtime, team, project } = await stripeConnectedProject(options.store, 'Imported');
  try {
    const seeded = stripe.seedAccount(options.customers);

    options.progress(`import: ${options.customers} Stripe customers and subscriptions`);
    let stripeBefore = stripe.requests.length;
    counting.reset();
    let started = performance.now();
    const job = await createImport(runtime, team.principal, project.id, { source: 'stripe', dry_run: false });
    let importPages = 0;
    while (runtime.importPages.length) {
      await processImportPage(runtime, runtime.importPages.shift()!);
      if (++importPages % 20 === 0)
        options.progress(`import: ${importPages} pages in ${Math.round((performance.now() - started) / 1000)} s`);
    }
    const seconds = (performance.now() - started) / 1000;
    const importRequests = counting.requests();
    const imported = await getImport(runtime, team.principal, project.id, job.id);
    if (imported.status !== 'succeeded') throw new Error(`import ${imported.status}: ${imported.error}`);
    const created = imported.counts.subscriptions.created;
    const importing: ImportFigures = {
      customers: options.customers,
      subscriptions: created,
      seconds,
      subscriptionsPerSecond: created / seconds,
      stripeRequests: stripe.requests.length - stripeBefore,
      dynamoDbRequests: importRequests,
      dynamoDbPerSubscription: importRequests / created,
      stripePerSubscription: (stripe.requests.length - stripeBefore) / created,
    };

    // Drift at the fake, no webhook: a cancellation, a scheduled cancellation.
    Object.assign(stripe.subscriptions.get(seeded.subscriptions[0])!, { status: 'canceled' });
    stripe.subscriptions.get(seeded.subscriptions[1])!.cancel_at_period_end = true;
    options.progress(`audit: ${options.customers} Stripe subscriptions against ours`);
    stripeBefore = stripe.requests.length;
    counting.reset();
    started = performance.now();
    await createAccessAudit(runtime, team.principal, project.id, {});
    let pages = 0;
    while (runtime.auditPages.length) {
      await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
      pages++;
    }
    const auditSeconds = (performance.now() - started) / 1000;
    const dynamoDbRequests = counting.requests();
    const stripeRequests = stripe.requests.length - stripeBefore;
    const latest = await getLatestAccessAudit(runtime, team.principal, project.id, { limit: 1 });
    if (latest.status !== 'succeeded') throw new Error(`audit ${latest.status}: ${latest.error}`);
    const audited = latest.audited.stripe_subscriptions;
    return {
      importing,
      audit: {
        stripeSubscriptions: audited,
        subscriptions: latest.audited.subscriptions,
        findings: latest.open_findings,
        seconds: auditSeconds,
        pages,
        dynamoDbRequests,
        stripeRequests,
        dynamoDbPerStripeSubscription: dynamoDbRequests / audited,
        stripePerStripeSubscription: stripeRequests / audited,
      },
    };
  } finally {
    await stripe.stop();
  }
}
