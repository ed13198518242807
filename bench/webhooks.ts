/**
 * Benchmark 2 (DESIGN §2, D6, D7, D9): webhook delivery through the local pipeline (outbox relay → fan-out →
 * in-process queue → dispatcher → HTTPS). This module holds what its runs share: the label of the pipeline's
 * background requests and the REST calls that set up a team and its endpoints. The runs: drain.ts (the drain beside
 * the HTTPS ceiling) and webhook-latency.ts (commit → first attempt, the noisy neighbour).
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { systemClock } from '../shared/clock.js';
import type { LocalService } from '../shared/local/service.js';
import { createTeam } from '../shared/domain/teams/repository.js';
import { TIER_ATTRIBUTE } from '../shared/domain/billing/record.js';
import { keys } from '../shared/store/keys.js';
import { mintTokens } from './tokens.js';

/**
 * The label of the pipeline's background requests in the bench's request counter: the local outbox
 * relay woken after a commit, its fan-out and the dispatch that follows (instrumentation.ts labels them so).
 */
export const PIPELINE_LABEL = 'outbox relay, fan-out and dispatch';

/**
 * POSTs `body` as JSON with a bearer `token` and a fresh `Idempotency-Key`; returns the parsed answer, throws unless
 * its status is `expected`.
 */
export async function postJson(
  service: LocalService,
  token: string,
  path: string,
  body: unknown,
  expected: number,
): Promise<unknown> {
  const response = await fetch(`${service.baseUrl}${path}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': randomUUID() },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`POST ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/**
 * Creates a team on the `business` tier (no tier limit below the D8 cap; set without events, as tests do) and one token
 * of it holding every ability.
 */
export async function createBenchTeam(
  service: LocalService,
  name: string,
): Promise<{ teamId: string; bearer: string }> {
  const team = await createTeam(service.store, systemClock, { name });
  await service.store.update({
    Key: keys.team(team.id),
    UpdateExpression: 'SET #tier = :tier',
    ExpressionAttributeNames: { '#tier': TIER_ATTRIBUTE },
    ExpressionAttributeValues: { ':tier': 'business' },
  });
  const [token] = await mintTokens(service.store, team.id, 1, name);
  return { teamId: team.id, bearer: token.token };
}
