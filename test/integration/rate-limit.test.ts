/**
 * Rate limits (interface "Limits", DESIGN D4) against DynamoDB Local: the counters are conditional
 * updates in the table, so concurrent requests with one token are admitted exactly up to the limit —
 * never one more — on the tool server (`mcp`, 120/min per token), on REST (`rest`, 600/min per token)
 * and without a token (5/min per client IP, one bucket per surface). Every response of a limited surface
 * carries `X-RateLimit-Limit` / `X-RateLimit-Remaining`; a 429 is a RATE_LIMITED problem with
 * `Retry-After` in whole seconds until the window ends. Time is a manual clock: no sleeping.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { ProblemError } from '../../shared/errors.js';
import { consumeRateLimit, RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import { expectProblem, expectRestProblem } from '../support/guarantees.js';
import { mcpPost, mcpSession, rest, toolsCall } from '../support/calls.js';
import {
  createTestRuntime,
  seedTeam,
  seedToken,
  testClock,
  traceRoundTrips,
  type TestRuntime,
} from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let teamId: string;
let token: string;
let tokenId: string;

beforeEach(async () => {
  clock = testClock({ secondsIntoMinute: 15 }); // 15 s into a one-minute window: `Retry-After` must be 45
  runtime = await createTestRuntime({ clock });
  const seeded = await seedTeam(runtime.store, clock);
  teamId = seeded.team.id;
  token = seeded.token;
  tokenId = seeded.principal.tokenId;
});

describe('the DynamoDB counter', () => {
  it('admits exactly the rest of the limit out of concurrent requests, each with a distinct remaining count', async () => {
    // 100 of the 120 taken in one step (the same conditional ADD, 100 units): the race is for the last 20.
    await consumeRateLimit(runtime.store, clock, 'mcp', tokenId, 100);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 40 }, () => consumeRateLimit(runtime.store, clock, 'mcp', tokenId)),
    );
    const admitted = outcomes
      .filter((outcome) => outcome.status === 'fulfilled')
      .map((outcome) => (outcome as PromiseFulfilledResult<{ remaining: number }>).value);
    const refused = outcomes
      .filter((outcome) => outcome.status === 'rejected')
      .map((outcome) => outcome.reason as ProblemError);
    expect(admitted).toHaveLength(20);
    // Each admission saw its own count: remaining values are exactly 19, 18, ..., 0.
    expect(admitted.map((state) => state.remaining).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 20 }, (_, index) => index),
    );
    expect(refused).toHaveLength(20);
    for (const error of refused) {
      expect(error).toBeInstanceOf(ProblemError);
      expect(error.code).toBe('RATE_LIMITED');
      expect(error.headers).toMatchObject({
        'Retry-After': '45',
        'X-RateLimit-Limit': '120',
        'X-RateLimit-Remaining': '0',
      });
    }
    // A step that would pass the limit is refused whole: nothing is left to take.
    await expect(consumeRateLimit(runtime.store, clock, 'mcp', tokenId)).rejects.toMatchObject({
      code: 'RATE_LIMITED',
    });
  });

  it('keeps buckets and subjects apart, and opens a new window when the minute ends', async () => {
    for (let index = 0; index < 5; index++)
      await consumeRateLimit(runtime.store, clock, 'mcp-anonymous', '203.0.113.1');
    await expect(consumeRateLimit(runtime.store, clock, 'mcp-anonymous', '203.0.113.1')).rejects.toMatchObject({
      code: 'RATE_LIMITED',
    });
    // Another IP, and the same subject in another bucket, are unaffected.
    await expect(consumeRateLimit(runtime.store, clock, 'mcp-anonymous', '203.0.113.2')).resolves.toMatchObject({
      limit: 5,
      remaining: 4,
    });
    await expect(consumeRateLimit(runtime.store, clock, 'rest-anonymous', '203.0.113.1')).resolves.toMatchObject({
      limit: 5,
      remaining: 4,
    });
    clock.advance(44_999);
    await expect(consumeRateLimit(runtime.store, clock, 'mcp-anonymous', '203.0.113.1')).rejects.toMatchObject({
      headers: { 'Retry-After': '1' },
    });
    clock.advance(1);
    await expect(consumeRateLimit(runtime.store, clock, 'mcp-anonymous', '203.0.113.1')).resolves.toMatchObject({
      remaining: 4,
    });
  });

  it('uses the limits of DESIGN D4', () => {
    expect(RATE_LIMITS.mcp).toEqual({ limit: 120, windowSeconds: 60 });
    expect(RATE_LIMITS['mcp-anonymous']).toEqual({ limit: 5, windowSeconds: 60 });
    expect(RATE_LIMITS.rest).toEqual({ limit: 600, windowSeconds: 60 });
  });
});

describe('tool server (bucket mcp, 120 per minute per token)', () => {
  it('admits exactly the 120th request of one token and no more when 40 tool calls race for the last 20, and tells each its remaining count', async () => {
    const sessionId = await mcpSession(runtime, token); // initialize + notifications/initialized: 2 requests
    // 100 of the 120 used: the race is for the last 20
    await consumeRateLimit(runtime.store, clock, 'mcp', tokenId, 98);
    const replies = await Promise.all(
      Array.from({ length: 40 }, (_, index) =>
        mcpPost(runtime, toolsCall(index + 1, 'get_team'), { token, sessionId }),
      ),
    );
    const ok = replies.filter((reply) => reply.status === 200);
    const limited = replies.filter((reply) => reply.status === 429);
    expect(ok.length + limited.length).toBe(40);
    expect(ok).toHaveLength(20);
    for (const reply of ok) expect(reply.json.result.structuredContent).toMatchObject({ id: teamId });
    expect(ok.map((reply) => Number(reply.headers.get('x-ratelimit-remaining'))).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 20 }, (_, index) => index),
    );
    for (const reply of replies) expect(reply.headers.get('x-ratelimit-limit')).toBe('120');
    for (const reply of limited) {
      expect(reply.headers.get('content-type')).toContain('application/problem+json');
      expect(reply.headers.get('retry-after')).toBe('45');
      expect(reply.headers.get('x-ratelimit-remaining')).toBe('0');
      expectProblem(reply.json, 'RATE_LIMITED');
    }
    // Another token of the same team has its own bucket.
    const other = await seedToken(runtime.store, clock, { teamId, abilities: ['mcp:full', 'team:view'] });
    const otherSession = await mcpSession(runtime, other.token);
    const reply = await mcpPost(runtime, toolsCall(1, 'get_team'), { token: other.token, sessionId: otherSession });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('x-ratelimit-remaining')).toBe('117');
    // The next window admits the first token again.
    clock.advance(45_000);
    expect((await mcpPost(runtime, toolsCall(1, 'get_team'), { token, sessionId })).status).toBe(200);
  });

  it('limits requests without a valid token to 5 per minute per client IP, with the headers on the 401s', async () => {
    const replies = [];
    for (let index = 0; index < 6; index++)
      replies.push(
        await mcpPost(runtime, toolsCall(1, 'get_team'), {
          clientIp: '203.0.113.9',
          token: index % 2 ? 'svc_live_not-a-token' : undefined,
        }),
      );
    expect(replies.map((reply) => reply.status)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(replies.map((reply) => reply.headers.get('x-ratelimit-remaining'))).toEqual(['4', '3', '2', '1', '0', '0']);
    for (const reply of replies) expect(reply.headers.get('x-ratelimit-limit')).toBe('5');
    expectProblem(replies[0].json, 'AUTHENTICATION_REQUIRED');
    expectProblem(replies[5].json, 'RATE_LIMITED');
    expect(replies[5].headers.get('retry-after')).toBe('45');
    expect((await mcpPost(runtime, toolsCall(1, 'get_team'), { clientIp: '203.0.113.10' })).status).toBe(401);
    // A token's own requests are counted in its own bucket, not the IP's.
    const sessionId = await mcpSession(runtime, token);
    const fromOtherIp = await mcpPost(runtime, toolsCall(1, 'get_team'), {
      token,
      sessionId,
      clientIp: '203.0.113.10',
    });
    expect(fromOtherIp.status).toBe(200);
    expect(fromOtherIp.headers.get('x-ratelimit-limit')).toBe('120');
  });

  it('once the per-IP bucket is full, guesses are stopped (429) but a valid token is still served from its own bucket (D4 as amended)', async () => {
    const sessionId = await mcpSession(runtime, token);
    const guesses = [];
    for (let index = 0; index < 5; index++)
      guesses.push(
        await mcpPost(runtime, toolsCall(1, 'get_team'), {
          clientIp: '203.0.113.11',
          token: `${token.slice(0, -4)}AAA${index}`,
        }),
      );
    expect(guesses.map((reply) => reply.status)).toEqual([401, 401, 401, 401, 401]);
    // A 6th guess from that IP is stopped whatever it carries; it is not counted any more.
    const stopped = await mcpPost(runtime, toolsCall(1, 'get_team'), {
      clientIp: '203.0.113.11',
      token: `${token.slice(0, -4)}CCCC`,
    });
    expectProblem(stopped.json, 'RATE_LIMITED');
    expect(stopped.status).toBe(429);
    expect(stopped.headers.get('retry-after')).toBe('45');
    expect(stopped.headers.get('x-ratelimit-limit')).toBe('5');
    // The right token from the same (shared) IP is served: someone else's failures never lock it out.
    const served = await Promise.all(
      Array.from({ length: 30 }, () =>
        mcpPost(runtime, toolsCall(1, 'get_team'), { token, sessionId, clientIp: '203.0.113.11' }),
      ),
    );
    expect(served.map((reply) => reply.status)).toEqual(Array(30).fill(200));
    expect(served[0].headers.get('x-ratelimit-limit')).toBe('120');
  });
});

describe('REST (bucket rest, 600 per minute per token)', () => {
  it('admits exactly the 600th request of one token and no more when 100 race for the last 50; every answer has the headers, each 429 a Retry-After', async () => {
    // 550 of the 600 used: the race is for the last 50
    await consumeRateLimit(runtime.store, clock, 'rest', tokenId, 550);
    const replies = await Promise.all(
      Array.from({ length: 100 }, () => rest(runtime, { method: 'GET', path: '/v1/teams/current', token })),
    );
    const ok = replies.filter((reply) => reply.status === 200);
    const limited = replies.filter((reply) => reply.status === 429);
    expect(ok).toHaveLength(50);
    expect(limited).toHaveLength(50);
    expect(ok.map((reply) => Number(reply.headers['x-ratelimit-remaining'])).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 50 }, (_, index) => index),
    );
    for (const reply of replies) expect(reply.headers['x-ratelimit-limit']).toBe('600');
    for (const reply of limited) {
      expectRestProblem(reply, 'RATE_LIMITED');
      expect(reply.headers['retry-after']).toBe('45');
      expect(reply.headers['x-ratelimit-remaining']).toBe('0');
    }
  });

  it('carries the headers on errors of authenticated requests too (403, 404, 422)', async () => {
    const weak = await seedToken(runtime.store, clock, { teamId, abilities: ['team:view'] });
    const replies = [
      await rest(runtime, { method: 'GET', path: '/v1/projects', token: weak.token }),
      await rest(runtime, { method: 'GET', path: `/v1/projects/${crypto.randomUUID()}`, token }),
      await rest(runtime, { method: 'GET', path: '/v1/projects', token, query: { limit: '1000' } }),
    ];
    expect(replies.map((reply) => reply.status)).toEqual([403, 404, 422]);
    expect(replies.map((reply) => reply.headers['x-ratelimit-remaining'])).toEqual(['599', '599', '598']);
  });

  it('limits requests without a valid token to 5 per minute per client IP', async () => {
    const replies = [];
    for (let index = 0; index < 6; index++)
      replies.push(
        await rest(runtime, {
          method: 'GET',
          path: '/v1/teams/current',
          sourceIp: '203.0.113.20',
          token: index === 3 ? 'svc_live_wrong' : undefined,
        }),
      );
    expect(replies.map((reply) => reply.status)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(replies.map((reply) => reply.headers['x-ratelimit-remaining'])).toEqual(['4', '3', '2', '1', '0', '0']);
    expect(replies[0].headers['www-authenticate']).toMatch(/^Bearer/);
    expectRestProblem(replies[5], 'RATE_LIMITED');
    expect(replies[5].headers['retry-after']).toBe('45');
    // The public documents need no token and are not limited.
    for (let index = 0; index < 3; index++)
      expect((await rest(runtime, { method: 'GET', path: '/openapi.json', sourceIp: '203.0.113.20' })).status).toBe(
        200,
      );
    // Once the IP's 5 are used, a guess is refused (429) but a valid token from the same IP is served
    // from its own bucket: a shared IP (NAT, a hosted AI platform) never locks a valid token out (D4).
    expectRestProblem(
      await rest(runtime, {
        method: 'GET',
        path: '/v1/teams/current',
        token: `${token.slice(0, -4)}DDDD`,
        sourceIp: '203.0.113.20',
      }),
      'RATE_LIMITED',
    );
    const served = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token, sourceIp: '203.0.113.20' });
    expect(served.status).toBe(200);
    expect(served.headers['x-ratelimit-limit']).toBe('600');
    // The public invitation acceptance fills the IP's bucket too, and still locks no valid token out.
    expect(
      (
        await rest(runtime, {
          method: 'POST',
          path: '/v1/team-invitations/accept',
          sourceIp: '203.0.113.20',
          body: { token: 'nope' },
        })
      ).status,
    ).toBe(429);
    expect(
      (await rest(runtime, { method: 'GET', path: '/v1/teams/current', token, sourceIp: '203.0.113.20' })).status,
    ).toBe(200);
  });

  it('reads the token and the IP counter in one request and writes nothing once the IP is refused (D4)', async () => {
    for (let index = 0; index < 5; index++)
      await rest(runtime, {
        method: 'GET',
        path: '/v1/teams/current',
        token: `${token.slice(0, -4)}BBB${index}`,
        sourceIp: '203.0.113.22',
      });
    const commands: string[] = [];
    const counted = {
      ...runtime,
      store: new Proxy(runtime.store, {
        get: (target, property, receiver) => {
          const value = Reflect.get(target, property, receiver);
          return typeof value === 'function'
            ? (...args: unknown[]) => {
                commands.push(String(property));
                return value.apply(target, args);
              }
            : value;
        },
      }),
    };
    const refused = await rest(counted, {
      method: 'GET',
      path: '/v1/teams/current',
      token: `${token.slice(0, -4)}CCCC`,
      sourceIp: '203.0.113.22',
    });
    expect(refused.status).toBe(429);
    expect(commands).toEqual(['batchGet']);
    commands.length = 0;
    expect(
      (await rest(counted, { method: 'GET', path: '/v1/teams/current', token, sourceIp: '203.0.113.23' })).status,
    ).toBe(200);
    // Token + IP counter in one read, then the token's own bucket
    expect(commands.slice(0, 2)).toEqual(['batchGet', 'update']);
  });

  it('runs a read beside its rate limit’s update, and answers a refused one with the 429 alone (D4)', async () => {
    const { runtime: traced, events } = traceRoundTrips(runtime);
    const served = await rest(traced, { method: 'GET', path: '/v1/teams/current', token });
    expect(served.status).toBe(200);
    // The team's read is sent before the counter's update answers: one round trip instead of two.
    expect(events).toContain('update RATE answered');
    expect(events.indexOf('get TEAM sent')).toBeLessThan(events.indexOf('update RATE answered'));
    await consumeRateLimit(runtime.store, clock, 'rest', tokenId, RATE_LIMITS.rest.limit - 1);
    const refused = await rest(traced, { method: 'GET', path: '/v1/teams/current', token });
    expectRestProblem(refused, 'RATE_LIMITED');
    expect(refused.json).not.toHaveProperty('id');
  });
  it('writes a write’s idempotency claim beside its rate limit’s update, and releases the claim when the limit refuses (D3, D4)', async () => {
    const { runtime: traced, events } = traceRoundTrips(runtime);
    const create = (key: string) =>
      rest(traced, {
        method: 'POST',
        path: '/v1/projects',
        token,
        headers: { 'Idempotency-Key': key },
        body: { name: 'Beside the limit', platform_type: 'discord' },
      });
    const first = await create(randomUUID());
    expect(first.status).toBe(201);
    // The claim is sent before the counter's update answers: one round trip instead of two.
    expect(events).toContain('put IDEMPOTENCY sent');
    expect(events.indexOf('put IDEMPOTENCY sent')).toBeLessThan(events.indexOf('update RATE answered'));

    await consumeRateLimit(runtime.store, clock, 'rest', tokenId, RATE_LIMITS.rest.limit - 1);
    const key = randomUUID();
    expectRestProblem(await create(key), 'RATE_LIMITED');
    // A new window: the refused request's key was released, so its retry runs (no replay, no 409) and creates once.
    clock.advance(60_000);
    const retried = await create(key);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replay']).toBeUndefined();
    expect((await create(key)).headers['idempotent-replay']).toBe('true');
    const listed = await rest(runtime, { method: 'GET', path: '/v1/projects', token });
    expect((listed.json as { data: unknown[] }).data).toHaveLength(2);
  });
});
