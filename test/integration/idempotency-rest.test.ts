/**
 * Idempotency (interface "REST" writes, DESIGN D3) on REST (`Idempotency-Key` header) and on write tools
 * (`idempotency_key` argument), against DynamoDB Local: UUID keys only; keys per team, kept 24 hours, bound to the
 * token that made the first request; a retry of the same request by that token replays status, body and headers with
 * `Idempotent-Replay: true`; the same key for any other request (other body, other route, other surface) is
 * IDEMPOTENCY_KEY_REUSED (422); a retry while the first still runs is IDEMPOTENCY_KEY_IN_USE (409); a write that failed
 * is not stored; 4 concurrent duplicates have exactly one effect (counted in the table). The stored record never holds
 * a secret in the clear. Subscription transitions take their key 'in-transaction': the same rules, except that
 * concurrent duplicates all get the first response (no IDEMPOTENCY_KEY_IN_USE), still with exactly one effect.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  beginIdempotentRequest,
  IDEMPOTENCY_LOCK_SECONDS,
  requestFingerprint,
} from '../../shared/limits/idempotency.js';
import {
  countProjects,
  domainSnapshot,
  expectRestProblem,
  expectToolProblem,
  gatedStore,
  scanTable,
  withStore,
} from '../support/guarantees.js';
import { rest, tool } from '../support/calls.js';
import { seedToken } from '../support/store.js';
import { createStore } from '../../shared/store/store.js';
import {
  RACERS,
  clock,
  createProjectCall,
  isProjectTransaction,
  project,
  runtime,
  teamId,
  token,
  world,
  useIdempotencyFixture,
} from '../support/fixtures/idempotency.js';

useIdempotencyFixture();

describe('REST Idempotency-Key', () => {
  it('replays the first response (status, body, headers) with Idempotent-Replay: true, and creates one project', async () => {
    const key = randomUUID();
    const before = await countProjects(runtime.store, teamId);
    const first = await rest(runtime, createProjectCall(key));
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replay']).toBeUndefined();
    for (const retry of [key, key.toUpperCase()]) {
      const replay = await rest(runtime, createProjectCall(retry));
      expect(replay.status).toBe(201);
      expect(replay.text).toBe(first.text);
      expect(replay.headers['idempotent-replay']).toBe('true');
      expect(replay.headers['content-type']).toBe(first.headers['content-type']);
      expect(replay.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    }
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
    // A stored response is bound to its token (D3): another token of team A with the key is REUSED, not a replay.
    const sibling = await seedToken(runtime.store, clock, { teamId, abilities: ['project:create'] });
    const fromSibling = await rest(runtime, createProjectCall(key, project(), sibling.token));
    expectRestProblem(fromSibling, 'IDEMPOTENCY_KEY_REUSED');
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
    // Authorization runs before the key is looked at: a token without the ability learns nothing.
    expectRestProblem(
      await rest(runtime, createProjectCall(key, project(), world.a.weak.token)),
      'TOKEN_MISSING_ABILITY',
    );
  });

  it('answers IDEMPOTENCY_KEY_REUSED for the same key with another body, another route or another surface', async () => {
    const key = randomUUID();
    expect((await rest(runtime, createProjectCall(key))).status).toBe(201);
    const snapshot = await domainSnapshot(runtime.store);
    expectRestProblem(await rest(runtime, createProjectCall(key, project('Another name'))), 'IDEMPOTENCY_KEY_REUSED');
    expectRestProblem(
      await rest(runtime, {
        method: 'POST',
        path: '/v1/webhook-endpoints',
        token,
        headers: { 'Idempotency-Key': key },
        body: { name: 'x', url: 'https://a.example/h', events: ['project.created'] },
      }),
      'IDEMPOTENCY_KEY_REUSED',
    );
    expectRestProblem(
      await rest(runtime, {
        method: 'DELETE',
        path: `/v1/webhook-endpoints/${world.a.endpoint.id}`,
        token,
        headers: { 'Idempotency-Key': key },
      }),
      'IDEMPOTENCY_KEY_REUSED',
    );
    expectToolProblem(
      await tool(runtime, world.a.principal, 'create_project', { ...project(), idempotency_key: key }),
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(snapshot);
  });

  it('refuses a key that is not a UUID, before anything is written', async () => {
    const snapshot = await domainSnapshot(runtime.store);
    for (const key of ['not-a-uuid', '12345', `${randomUUID()}x`, ' ', 'ZZZZZZZZ-ZZZZ-ZZZZ-ZZZZ-ZZZZZZZZZZZZ']) {
      const reply = await rest(runtime, createProjectCall(key));
      const problem = expectRestProblem(reply, 'VALIDATION_FAILED');
      expect(problem.errors).toEqual([{ path: 'header.idempotency-key', message: expect.any(String) }]);
    }
    expectToolProblem(
      await tool(runtime, world.a.principal, 'create_project', { ...project(), idempotency_key: 'nope' }),
      'VALIDATION_FAILED',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(snapshot);
  });

  it('does not store a write that failed: a corrected retry with the same key runs', async () => {
    const key = randomUUID();
    const snapshot = await domainSnapshot(runtime.store);
    expectRestProblem(
      await rest(runtime, createProjectCall(key, { name: '', platform_type: 'discord' })),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await rest(runtime, {
        ...createProjectCall(key, '{"name": "broken"'),
        headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json' },
      }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await rest(runtime, {
        ...createProjectCall(key, 'name=x'),
        headers: { 'Idempotency-Key': key, 'Content-Type': 'application/x-www-form-urlencoded' },
      }),
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectRestProblem(
      await rest(runtime, {
        method: 'DELETE',
        path: `/v1/webhook-endpoints/${randomUUID()}`,
        token,
        headers: { 'Idempotency-Key': key },
      }),
      'NOT_FOUND',
    );
    expect(await domainSnapshot(runtime.store)).toEqual(snapshot); // no idempotency record either
    const corrected = await rest(runtime, createProjectCall(key));
    expect(corrected.status).toBe(201);
    expect(corrected.headers['idempotent-replay']).toBeUndefined();
  });

  it('answers IDEMPOTENCY_KEY_IN_USE while the first request runs, then replays its response', async () => {
    const key = randomUUID();
    const gate = gatedStore(runtime.store, isProjectTransaction);
    const slow = withStore(runtime, gate.store);
    const first = rest(slow, createProjectCall(key));
    await gate.reached; // the first request holds the key and is inside its transaction
    const concurrent = await rest(runtime, createProjectCall(key));
    expectRestProblem(concurrent, 'IDEMPOTENCY_KEY_IN_USE');
    expect(concurrent.headers['retry-after']).toBe('1');
    expect(concurrent.headers['x-ratelimit-remaining']).not.toBe('0');
    // A different request with the busy key is still REUSED, not IN_USE.
    expectRestProblem(await rest(runtime, createProjectCall(key, project('Other'))), 'IDEMPOTENCY_KEY_REUSED');
    gate.release();
    const done = await first;
    expect(done.status).toBe(201);
    const replay = await rest(runtime, createProjectCall(key));
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.json).toEqual(done.json);
  });

  it(`has exactly one effect when ${RACERS} identical requests race (counted in the table)`, async () => {
    const key = randomUUID();
    const before = await countProjects(runtime.store, teamId);
    const replies = await Promise.all(Array.from({ length: RACERS }, () => rest(runtime, createProjectCall(key))));
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
    const originals = replies.filter(
      (reply) => reply.status === 201 && reply.headers['idempotent-replay'] === undefined,
    );
    expect(originals).toHaveLength(1);
    for (const reply of replies) {
      if (reply.status === 201) expect(reply.json).toEqual(originals[0].json);
      else expectRestProblem(reply, 'IDEMPOTENCY_KEY_IN_USE');
    }
  });

  it('scopes keys to the team: team B using team A’s key gets its own effect', async () => {
    const key = randomUUID();
    const a = await rest(runtime, createProjectCall(key));
    const b = await rest(runtime, createProjectCall(key, project(), world.b.token));
    expect(b.status).toBe(201);
    expect(b.headers['idempotent-replay']).toBeUndefined();
    expect(b.json.id).not.toBe(a.json.id);
    expect(await countProjects(runtime.store, world.b.team.id)).toBe(2);
  });

  it('keeps a key 24 hours: a retry after that runs again', async () => {
    const key = randomUUID();
    const first = await rest(runtime, createProjectCall(key));
    clock.advance(24 * 3_600_000 - 1_000);
    expect((await rest(runtime, createProjectCall(key))).headers['idempotent-replay']).toBe('true');
    clock.advance(2_000);
    const later = await rest(runtime, createProjectCall(key));
    expect(later.status).toBe(201);
    expect(later.headers['idempotent-replay']).toBeUndefined();
    expect(later.json.id).not.toBe(first.json.id);
  });

  it('lets a retry take over a claim abandoned by a crashed request once its lock has expired', async () => {
    const key = randomUUID();
    const body = JSON.stringify(project());
    // What a request that crashed after claiming the key leaves behind (same fingerprint as below).
    const abandoned = await beginIdempotentRequest(
      runtime.store,
      clock,
      teamId,
      key,
      requestFingerprint([world.a.principal.tokenId, 'POST', '/v1/projects', '', body]),
    );
    expect(abandoned.kind).toBe('claimed');
    const retry = {
      ...createProjectCall(key),
      body,
      headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json' },
    };
    expectRestProblem(await rest(runtime, retry), 'IDEMPOTENCY_KEY_IN_USE');
    clock.advance((IDEMPOTENCY_LOCK_SECONDS + 1) * 1000);
    const retried = await rest(runtime, retry);
    expect(retried.status).toBe(201);
  });

  it('never stores a minted token secret or a webhook secret in the clear, yet replays them to the key holder', async () => {
    const tokenKey = randomUUID();
    const minted = await rest(runtime, {
      method: 'POST',
      path: '/v1/tokens',
      token,
      headers: { 'Idempotency-Key': tokenKey },
      body: { abilities: ['team:view'] },
    });
    expect(minted.status).toBe(201);
    const endpointKey = randomUUID();
    const endpoint = await rest(runtime, {
      method: 'POST',
      path: '/v1/webhook-endpoints',
      token,
      headers: { 'Idempotency-Key': endpointKey },
      body: { name: 'replayed', url: 'https://receiver.example/replayed', events: ['project.created'] },
    });
    expect(endpoint.status).toBe(201);
    const tokenSecret = (minted.json.token as string).split('_').at(-1)!;
    const raw = JSON.stringify(await scanTable(runtime.store));
    expect(raw).not.toContain(tokenSecret);
    expect(raw).not.toContain(tokenKey);
    expect(raw).not.toContain(endpointKey);
    expect(raw).not.toContain(endpoint.json.secret); // the endpoint item holds it sealed too (D16)
    const replay = await rest(runtime, {
      method: 'POST',
      path: '/v1/tokens',
      token,
      headers: { 'Idempotency-Key': tokenKey },
      body: { abilities: ['team:view'] },
    });
    expect(replay.headers['idempotent-replay']).toBe('true');
    expect(replay.json.token).toBe(minted.json.token);
  });
});

describe('the completion commits with the effect', () => {
  /** A store whose first transaction commits and then "loses" its answer, as a crash or a reset connection would. */
  function storeLosingFirstTransactionAnswer() {
    let lost = false;
    const document = new Proxy(runtime.store.document, {
      get(target, property, receiver) {
        if (property !== 'send') return Reflect.get(target, property, receiver);
        return async (command: { constructor: { name: string } }, ...rest: unknown[]) => {
          const answer = await (target.send as (...args: unknown[]) => Promise<unknown>).call(target, command, ...rest);
          if (!lost && command.constructor.name === 'TransactWriteCommand') {
            lost = true;
            throw new Error('socket hang up after the commit');
          }
          return answer;
        };
      },
    });
    return createStore({
      document: document,
      tableName: runtime.store.tableName,
      deadLetterTableName: runtime.store.deadLetterTableName,
    });
  }

  it('replays, never re-runs, a write whose answer was lost after its transaction committed', async () => {
    const key = randomUUID();
    const before = await countProjects(runtime.store, teamId);
    const lost = await rest(
      withStore(runtime, storeLosingFirstTransactionAnswer()),
      createProjectCall(key, project('Committed once')),
    );
    expectRestProblem(lost, 'INTERNAL_ERROR');
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
    const retry = await rest(runtime, createProjectCall(key, project('Committed once')));
    expect(retry.status).toBe(201);
    expect(retry.headers['idempotent-replay']).toBe('true');
    expect(retry.json.name).toBe('Committed once');
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
  });

  it('does the same for a write tool', async () => {
    const args = { ...project('Tool committed once'), idempotency_key: randomUUID() };
    const before = await countProjects(runtime.store, teamId);
    expectToolProblem(
      await tool(withStore(runtime, storeLosingFirstTransactionAnswer()), world.a.principal, 'create_project', args),
      'INTERNAL_ERROR',
    );
    const retry = await tool(runtime, world.a.principal, 'create_project', args);
    expect(retry.isError).toBeFalsy();
    expect(retry._meta).toEqual({ 'idempotent-replay': true });
    expect(await countProjects(runtime.store, teamId)).toBe(before + 1);
  });
});

describe('a stored response is bound to the token that made it', () => {
  it('answers IDEMPOTENCY_KEY_REUSED to another token of the team with the same key and body, never replaying a minted token or a webhook secret', async () => {
    const other = await seedToken(runtime.store, clock, {
      teamId,
      abilities: ['token:create', 'team:view', 'webhook-endpoint:manage', 'project:view'],
      name: 'only token:create',
    });
    const tokenKey = randomUUID();
    const mintBody = { abilities: ['team:view'] };
    const minted = await rest(runtime, {
      method: 'POST',
      path: '/v1/tokens',
      token,
      headers: { 'Idempotency-Key': tokenKey },
      body: mintBody,
    });
    expect(minted.status).toBe(201);
    const stolen = await rest(runtime, {
      method: 'POST',
      path: '/v1/tokens',
      token: other.token,
      headers: { 'Idempotency-Key': tokenKey },
      body: mintBody,
    });
    expectRestProblem(stolen, 'IDEMPOTENCY_KEY_REUSED');
    expect(stolen.text).not.toContain(minted.json.token);
    const endpointKey = randomUUID();
    const endpointBody = { name: 'bound', url: 'https://receiver.example/bound', events: ['project.created'] };
    const endpoint = await rest(runtime, {
      method: 'POST',
      path: '/v1/webhook-endpoints',
      token,
      headers: { 'Idempotency-Key': endpointKey },
      body: endpointBody,
    });
    expect(endpoint.status).toBe(201);
    const replayToOther = await rest(runtime, {
      method: 'POST',
      path: '/v1/webhook-endpoints',
      token: other.token,
      headers: { 'Idempotency-Key': endpointKey },
      body: endpointBody,
    });
    expectRestProblem(replayToOther, 'IDEMPOTENCY_KEY_REUSED');
    expect(replayToOther.text).not.toContain(endpoint.json.secret);
    // The token that made the request still gets its replay.
    expect(
      (
        await rest(runtime, {
          method: 'POST',
          path: '/v1/tokens',
          token,
          headers: { 'Idempotency-Key': tokenKey },
          body: mintBody,
        })
      ).json.token,
    ).toBe(minted.json.token);
  });

  it('does the same for write tools', async () => {
    const other = await seedToken(runtime.store, clock, {
      teamId,
      abilities: ['mcp:full', 'project:create'],
      name: 'tool caller',
    });
    const args = { ...project('Bound tool'), idempotency_key: randomUUID() };
    const first = await tool(runtime, world.a.principal, 'create_project', args);
    expect(first.isError).toBeFalsy();
    expectToolProblem(await tool(runtime, other.principal, 'create_project', args), 'IDEMPOTENCY_KEY_REUSED');
  });
});
