import pMap from 'p-map';
import type { Principal } from '../../auth/principal.js';
import { integrationsOf } from '../../integrations.js';
import type Stripe from 'stripe';
import { stripeImportReader, stripePriceUseReader, type StripeImportObjects } from '../../providers/stripe-import.js';
import type { ImportPageMessage, Runtime } from '../../runtime.js';
import { importStore, type ImportNext, type ImportPageResult } from '../../store/imports.js';
import { readProviderLinks } from '../../store/payments/reads.js';
import { STRIPE } from '../payments/stripe-event-context.js';
import { listPlans } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import { loadProject, toProject } from '../projects/repository.js';
import { isInactivePrice, planItemOf, planOfPrice, stateOfSubscription } from './mapping.js';
import { importCustomer, importPrice, importSubscription, type ImportContext } from './objects.js';
import { IMPORT_KINDS, MAX_LISTED_SKIPS, type ImportKind } from './schema.js';

/**
 * The import worker (DESIGN D34, run like a broadcast job, D32): one queue message per Stripe page — prices, then
 * customers, then subscriptions. Each page is read at the cursor the job stores and its objects imported by their
 * Stripe ids (so a page run twice creates nothing twice); then the cursor moves on conditionally on the pages done and
 * the next page's message is sent. A worker that stopped mid-page leaves the cursor where it was: the sweeper sends the
 * message again and the page runs again. One Stripe read per message keeps far within Stripe's rate limits; a 429 or an
 * unreachable Stripe throws, so the queue tries the message again later.
 */

/** Objects of one page imported at once (each is a few reads and one transaction). */
const OBJECT_CONCURRENCY = 4;
/** Plans read per page while gathering the project's plans. */
const PLAN_PAGE = 100;

/** What one `import_page` message did: a page done and the next queued, the last page done, the job failed, nothing. */
export type ImportPageOutcome = 'import_page' | 'import_completed' | 'import_failed' | 'skipped';

/** A Stripe read failed in a way worth retrying (429, 5xx, unreachable): the queue delivers the message again. */
export class ImportPageRetry extends Error {}

/** The principal an import acts as: the job's team, its one project, no abilities (the POST was authorised). */
export function importPrincipal(job: { id: string; team_id: string; project_id: string }): Principal {
  return { tokenId: `import:${job.id}`, teamId: job.team_id, abilities: new Set(), projectIds: [job.project_id] };
}

/** The project's plans synced with a Stripe price (by price id), and every plan by id. */
export async function plansOf(runtime: Runtime, principal: Principal, projectId: string) {
  const byPrice = new Map<string, Plan>();
  const byId = new Map<string, Plan>();
  let cursor: string | undefined;
  do {
    const page = await listPlans(runtime.store, principal, projectId, { limit: PLAN_PAGE, cursor });
    for (const plan of page.data) {
      byId.set(plan.id, plan);
      if (plan.payment_provider === STRIPE && plan.provider_price_id) byPrice.set(plan.provider_price_id, plan);
    }
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return { byPrice, byId };
}

/**
 * The inactive prices of a page of prices, without a plan yet, that a subscription the import will bring on that price
 * uses: not ended, started, and with that price as its one plan item (another item's price having a plan already, or
 * able to make one, active or archived, on this page or another, makes it `multiple_plans`). One Stripe list of each
 * one's subscriptions. Throws {@link ImportPageRetry} (Stripe busy or unreachable) or an Error (refused), so the queue
 * tries the page again.
 */
async function inactivePricesInUse(
  runtime: Runtime,
  job: { team_id: string; project_id: string; plan_mapping: Record<string, string> },
  prices: Stripe.Price[],
  plans: Awaited<ReturnType<typeof plansOf>>,
): Promise<Set<string>> {
  const used = new Set<string>();
  const candidates = prices.filter(
    (price) => isInactivePrice(price) && !plans.byPrice.has(price.id) && !job.plan_mapping[price.id],
  );
  if (candidates.length === 0) return used;
  const read = stripePriceUseReader({ store: runtime.store, settings: () => integrationsOf(runtime) });
  const hasPlan = (price: Stripe.Price) => {
    const mapped = job.plan_mapping[price.id];
    if (mapped) return plans.byId.has(mapped);
    return plans.byPrice.has(price.id) || !('skip' in planOfPrice(price));
  };
  const importedOn = (priceId: string) => (subscription: Stripe.Subscription) => {
    const planItem = planItemOf(subscription, (price) => price.id === priceId || hasPlan(price));
    if ('skip' in planItem || planItem.item.price.id !== priceId) return false;
    return !('skip' in stateOfSubscription(subscription, planItem.item));
  };
  for (const price of candidates) {
    const answer = await read(job, price.id, importedOn(price.id));
    if (!answer.ok) throw answer.retryable ? new ImportPageRetry(answer.reason) : new Error(answer.reason);
    if (answer.used) used.add(price.id);
  }
  return used;
}

/**
 * The links of a page of customers or subscriptions to ours, and the linked subscribers, read at once (two BatchGets
 * instead of two or three GetItems per object). Read before the objects are imported: a link made meanwhile by another
 * worker of the same page makes the later write's condition fail, so nothing is created twice.
 */
function pageLinks(
  runtime: Runtime,
  job: { team_id: string; project_id: string },
  kind: 'subscribers' | 'subscriptions',
  objects: unknown[],
) {
  const customerIds =
    kind === 'subscribers'
      ? (objects as Stripe.Customer[]).map((customer) => customer.id)
      : (objects as Stripe.Subscription[]).map((subscription) =>
          typeof subscription.customer === 'string' ? subscription.customer : subscription.customer.id,
        );
  const subscriptionIds = kind === 'subscriptions' ? (objects as Stripe.Subscription[]).map((s) => s.id) : [];
  return readProviderLinks(runtime.store, job.team_id, job.project_id, STRIPE, { customerIds, subscriptionIds });
}

/** The kind after `kind`, or null after the last. */
function kindAfter(kind: ImportKind): ImportKind | null {
  return IMPORT_KINDS[IMPORT_KINDS.indexOf(kind) + 1] ?? null;
}

/**
 * Runs a job's next page and queues the one after. Returns the {@link ImportPageOutcome}; throws {@link
 * ImportPageRetry} (Stripe busy or unreachable) and store errors, so the queue retries the message.
 */
export async function processImportPage(runtime: Runtime, message: ImportPageMessage): Promise<ImportPageOutcome> {
  const job = await importStore.load(runtime.store, message.team_id, message.project_id, message.import_id);
  if (!job || (job.status !== 'queued' && job.status !== 'running')) return 'skipped';
  const principal = importPrincipal(job);
  const kind = job.kind ?? IMPORT_KINDS[0];
  const read = stripeImportReader({ store: runtime.store, settings: () => integrationsOf(runtime) });
  const page = await read(job, kind, job.starting_after);
  if (!page.ok) {
    if (page.retryable) throw new ImportPageRetry(page.reason);
    await importStore.recordFailure(runtime.store, job, page.reason, runtime.clock.nowMs());
    return 'import_failed';
  }
  const project = toProject(await loadProject(runtime.store, principal, job.project_id));
  const plans = await plansOf(runtime, principal, job.project_id);
  const result: ImportPageResult = { counts: {}, ignoredItems: 0, skipped: [] };
  const context: ImportContext = {
    runtime,
    principal,
    job,
    project,
    plansByPrice: plans.byPrice,
    mappedPlans: plans.byId,
    inactivePricesInUse:
      kind === 'plans' ? await inactivePricesInUse(runtime, job, page.data as Stripe.Price[], plans) : undefined,
    links: kind === 'plans' ? undefined : await pageLinks(runtime, job, kind, page.data),
    result,
  };
  const importOne = {
    plans: (object: StripeImportObjects['plans']) => importPrice(context, object),
    subscribers: (object: StripeImportObjects['subscribers']) => importCustomer(context, object),
    subscriptions: (object: StripeImportObjects['subscriptions']) => importSubscription(context, object),
  }[kind] as (object: unknown) => Promise<void>;
  await pMap(page.data, importOne, { concurrency: OBJECT_CONCURRENCY });
  const last = page.data.at(-1) as { id: string } | undefined;
  const following = kindAfter(kind);
  const next: ImportNext =
    page.hasMore && last
      ? { kind, startingAfter: last.id }
      : following
        ? { kind: following, startingAfter: null }
        : null;
  if (!(await importStore.recordPage(runtime.store, job, result, next, runtime.clock.nowMs(), MAX_LISTED_SKIPS)))
    return 'skipped';
  if (!next) return 'import_completed';
  await runtime.deliveryQueue.send([message], 0);
  return 'import_page';
}
