/**
 * Benchmark 4 (DESIGN D14, D15): the subscriber side at scale through the service.
 *   a. DynamoDB requests of one subscription transition over REST (pause, resume, cancel at period end,
 *      cancel now), split into authentication (the token and the IP's counter, the rate counter) and the
 *      rest, with where each request goes; aim: at most 3 beyond authentication.
 *   b. Listing page 1 and page 100 of a project's subscribers (`GET /v1/projects/{id}/subscribers`) with
 *      100,000 subscribers: the same number of requests on both pages. The subscribers are seeded with
 *      BatchWriteItem, built by the subscribers repository's own `prepareSubscriber` (seeding.ts).
 * The deadline worker's renewals (4c) are in renewals.ts.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Principal } from '../shared/auth/principal.js';
import { ABILITY_VALUES } from '../shared/catalogues/abilities.js';
import { createPlan } from '../shared/domain/plans/creation.js';
import { createProject } from '../shared/domain/projects/creation.js';
import { createSubscriber, prepareSubscriber } from '../shared/domain/subscribers/repository.js';
import { createSubscription } from '../shared/domain/subscriptions/creation.js';
import type { LocalService } from '../shared/local/service.js';
import { summarize, type LatencySummary } from './measuring.js';
import { applyFoldedUpdates, batchWrite, recordingTransaction } from './seeding.js';
import { isAuthentication, type RequestCounter } from './support.js';
import { mintTokens } from './tokens.js';

/**
 * A principal of `teamId` holding every ability (domain calls for seeding; `tokenId` names a real token where its owner
 * matters).
 */
export function fullPrincipal(teamId: string, tokenId: string): Principal {
  return { tokenId, teamId, abilities: new Set(ABILITY_VALUES), projectIds: null };
}

// ---------------------------------------------------------------------------------------------------
// a. One transition
// ---------------------------------------------------------------------------------------------------

/** Figures of one kind of transition over REST. */
export interface TransitionFigures {
  /** e.g. `POST /v1/subscriptions/{id}/pause` (active → paused). */
  name: string;
  calls: number;
  latency: LatencySummary;
  /** Foreground DynamoDB requests per call: all, authentication, beyond authentication (min–max). */
  total: { min: number; max: number };
  authentication: { min: number; max: number };
  beyondAuthentication: { min: number; max: number };
  /** Requests by what they touch, summed over the calls (divide by `calls`). */
  described: Record<string, number>;
  errors: string[];
}

/**
 * Creates `count` active subscriptions (creator grants on a monthly plan) in a new project of the
 * demo team through the domain, then drives each through pause → resume → cancel at period end →
 * cancel now over REST, counting each call's DynamoDB requests.
 */
export async function measureTransitions(options: {
  service: LocalService;
  counter: RequestCounter;
  count: number;
  progress: (line: string) => void;
}): Promise<TransitionFigures[]> {
  const { service, counter } = options;
  const runtime = service.runtime;
  const [token] = await mintTokens(service.store, service.demoTeamId, 1, 'bench transitions');
  const principal = fullPrincipal(service.demoTeamId, token.id);
  const project = await createProject(runtime, principal, { name: 'Bench transitions', platform_type: 'web' });
  const plan = await createPlan(runtime, principal, project.id, {
    name: 'Monthly',
    amount: 900,
    currency: 'USD',
    interval: 'month',
  });
  options.progress(`transitions: ${options.count} subscriptions × 4 transitions over REST`);
  const subscriptionIds: string[] = [];
  for (let index = 0; index < options.count; index++) {
    const subscriber = await createSubscriber(runtime, principal, project.id, {
      display_name: `Bench ${index}`,
      email: `bench-${index}@example.com`,
      consent: true,
    });
    subscriptionIds.push(
      (await createSubscription(runtime, principal, project.id, { subscriber_id: subscriber.id, plan_id: plan.id })).id,
    );
  }
  await runtime.idle();
  const steps = [
    { name: 'pause (active → paused)', action: 'pause', body: {} },
    { name: 'resume (paused → active)', action: 'resume', body: {} },
    { name: 'cancel at period end (active → pending_cancellation)', action: 'cancel', body: { at_period_end: true } },
    { name: 'cancel now (pending_cancellation → canceled)', action: 'cancel', body: { at_period_end: false } },
  ];
  const results: TransitionFigures[] = [];
  for (const step of steps) {
    const latencies: number[] = [];
    const totals: number[] = [];
    const authentications: number[] = [];
    const described: Record<string, number> = {};
    const errors: string[] = [];
    for (const id of subscriptionIds) {
      await runtime.idle(); // the previous call's events are fanned out in the background; keep them out of this call
      counter.reset();
      const started = performance.now();
      const response = await fetch(`${service.baseUrl}/v1/subscriptions/${id}/${step.action}`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${token.token}`,
          'Content-Type': 'application/json',
          'Idempotency-Key': randomUUID(),
        },
        body: JSON.stringify(step.body),
      });
      const text = await response.text();
      latencies.push(performance.now() - started);
      const counts = counter.snapshot();
      if (response.status !== 200 && errors.length < 3) errors.push(`${response.status} ${text.slice(0, 160)}`);
      let authentication = 0;
      for (const [description, count] of Object.entries(counts.described)) {
        described[description] = (described[description] ?? 0) + count;
        if (isAuthentication(description)) authentication += count;
      }
      totals.push(counts.commands);
      authentications.push(authentication);
    }
    const beyond = totals.map((total, index) => total - authentications[index]);
    results.push({
      name: `POST /v1/subscriptions/{id}/${step.action}: ${step.name}`,
      calls: subscriptionIds.length,
      latency: summarize(latencies),
      total: { min: Math.min(...totals), max: Math.max(...totals) },
      authentication: { min: Math.min(...authentications), max: Math.max(...authentications) },
      beyondAuthentication: { min: Math.min(...beyond), max: Math.max(...beyond) },
      described,
      errors,
    });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------------
// b. Page 1 and page 100
// ---------------------------------------------------------------------------------------------------

/** Figures of paging through a large project's subscribers. */
export interface ListingFigures {
  subscribers: number;
  pageSize: number;
  seedSeconds: number;
  /** Requests and latency of page 1 and of the last page read (page `pages`). */
  first: { requests: number; ms: number; described: Record<string, number>; count: number };
  last: { requests: number; ms: number; described: Record<string, number>; count: number; page: number };
  /** Requests per page over every page read (min–max). */
  requestsPerPage: { min: number; max: number };
  errors: string[];
}

/**
 * Seeds `subscribers` subscribers into a new project of the demo team (BatchWriteItem of the items
 * `prepareSubscriber` writes: the subscriber and its reference item; the team's subscriber counter
 * raised once by the total), then reads pages 1 … `pages` of `GET /v1/projects/{id}/subscribers` with
 * `limit=pageSize`, following `next_cursor`, counting each page's DynamoDB requests.
 */
export async function measureListing(options: {
  service: LocalService;
  counter: RequestCounter;
  subscribers: number;
  pageSize: number;
  pages: number;
  progress: (line: string) => void;
}): Promise<ListingFigures> {
  const { service, counter } = options;
  const runtime = service.runtime;
  const [token] = await mintTokens(service.store, service.demoTeamId, 1, 'bench listing');
  const principal = fullPrincipal(service.demoTeamId, token.id);
  const project = await createProject(runtime, principal, { name: 'Bench listing', platform_type: 'web' });
  options.progress(`listing: seeding ${options.subscribers.toLocaleString('en-US')} subscribers (BatchWriteItem)`);
  const seedStarted = performance.now();
  const tx = recordingTransaction();
  for (let index = 0; index < options.subscribers; index++) {
    const prepared = await prepareSubscriber(runtime, principal, project.id, {
      display_name: `Subscriber ${index}`,
      email: `subscriber-${index}@example.com`,
      consent: index % 2 === 0,
    });
    prepared.write(tx, { projectGuarded: true });
  }
  await batchWrite(service.store, tx.puts, 8);
  await applyFoldedUpdates(service.store, tx.updates);
  const seedSeconds = (performance.now() - seedStarted) / 1000;

  options.progress(`listing: pages 1–${options.pages} of ${options.pageSize}`);
  // A token's first call of each hour also stamps its `last_used_at` (one UpdateItem): make it here, so
  // page 1 and page N are measured alike.
  await fetch(`${service.baseUrl}/v1/teams/current`, { headers: { Authorization: `Bearer ${token.token}` } });
  const errors: string[] = [];
  const pages: Array<{ requests: number; ms: number; described: Record<string, number>; count: number }> = [];
  let cursor: string | null = null;
  for (let page = 1; page <= options.pages; page++) {
    const query = new URLSearchParams({ limit: String(options.pageSize) });
    if (cursor) query.set('cursor', cursor);
    await runtime.idle();
    counter.reset();
    const started = performance.now();
    const response = await fetch(`${service.baseUrl}/v1/projects/${project.id}/subscribers?${query}`, {
      headers: { Authorization: `Bearer ${token.token}` },
    });
    const text = await response.text();
    const ms = performance.now() - started;
    const counts = counter.snapshot();
    if (response.status !== 200) {
      errors.push(`page ${page}: ${response.status} ${text.slice(0, 160)}`);
      break;
    }
    const body = JSON.parse(text) as { data: unknown[]; next_cursor: string | null };
    pages.push({ requests: counts.commands, ms, described: counts.described, count: body.data.length });
    cursor = body.next_cursor;
    if (!cursor) break;
  }
  const requests = pages.map((page) => page.requests);
  return {
    subscribers: options.subscribers,
    pageSize: options.pageSize,
    seedSeconds,
    first: pages[0] ?? { requests: 0, ms: 0, described: {}, count: 0 },
    last: { ...(pages[pages.length - 1] ?? { requests: 0, ms: 0, described: {}, count: 0 }), page: pages.length },
    requestsPerPage: { min: Math.min(...requests), max: Math.max(...requests) },
    errors,
  };
}
