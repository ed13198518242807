/**
 * No token-id existence oracle (DESIGN D2): a bearer token whose id names no token and one
 * whose id exists but whose secret is wrong do the same work — one secret check (SHA-256 and a
 * constant-time comparison; against a hash no secret matches when the id is unknown), the same DynamoDB
 * requests — and get the same answer. Proven by counting the work, never by timing it (the timings are in
 * `npm run bench`: "unknown token id" vs "wrong secret"). On DynamoDB Local with a manual clock.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { authenticateRequest } from '../../shared/auth/authenticate-request.js';
import { checkToken, secretMatchesHash, sha256 } from '../../shared/auth/principal.js';
import type { ManualClock } from '../../shared/clock.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { keys } from '../../shared/store/keys.js';
import { createStore, type Store } from '../../shared/store/store.js';
import { withStore } from '../support/guarantees.js';
import { mcpPost, rest, toolsCall } from '../support/calls.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let teamId: string;
let tokenId: string;
/** A well-formed bearer string whose id exists and whose secret is wrong. */
let wrongSecret: string;
/** A well-formed bearer string whose id names no token (same secret as {@link wrongSecret}). */
let unknownId: string;

beforeEach(async () => {
  clock = testClock({ secondsIntoMinute: 10 });
  runtime = await createTestRuntime({ clock });
  const seeded = await seedTeam(runtime.store, clock);
  teamId = seeded.team.id;
  tokenId = seeded.principal.tokenId;
  wrongSecret = `svc_live_${tokenId}_${'W'.repeat(44)}`;
  unknownId = `svc_live_01ARZ3NDEKTSV4RRFFQ69G5FAV_${'W'.repeat(44)}`;
});

type Recorded = { command: string; input: string };

/**
 * The store over the same tables whose every DynamoDB command is recorded: its name and its input with
 * the two token ids replaced by `<token id>`, so the two paths can be compared request by request.
 */
function recordingStore(store: Store): { store: Store; commands: Recorded[] } {
  const commands: Recorded[] = [];
  const document = new Proxy(store.document, {
    get(target, property, receiver) {
      if (property !== 'send') return Reflect.get(target, property, receiver);
      return (command: { constructor: { name: string }; input: unknown }, ...rest: unknown[]) => {
        const input = JSON.stringify(command.input)
          .replaceAll(tokenId, '<token id>')
          .replaceAll('01ARZ3NDEKTSV4RRFFQ69G5FAV', '<token id>');
        commands.push({ command: command.constructor.name, input });
        return (target.send as (...args: unknown[]) => Promise<unknown>).call(target, command, ...rest);
      };
    },
  });
  return {
    store: createStore({ document, tableName: store.tableName, deadLetterTableName: store.deadLetterTableName }),
    commands,
  };
}

describe('an unknown token id and a wrong secret do the same work', () => {
  it('checkToken runs the secret check exactly once on both paths, with a 32-byte hash, and returns the same refusal', async () => {
    const item = await runtime.store.get(keys.token(tokenId));
    expect(item?.secret_sha256).toMatch(/^[0-9a-f]{64}$/);
    const check = vi.fn(secretMatchesHash);

    const unknown = checkToken(undefined, 'W'.repeat(44), check);
    expect(check).toHaveBeenCalledTimes(1);
    const [unknownSecret, unknownHash] = check.mock.calls[0];
    expect(unknownSecret).toBe('W'.repeat(44));
    expect(unknownHash).toMatch(/^[0-9a-f]{64}$/); // a real SHA-256 to compare with, not a shortcut
    expect(unknownHash).not.toBe(sha256('W'.repeat(44)).toString('hex'));

    check.mockClear();
    const wrong = checkToken(item, 'W'.repeat(44), check);
    expect(check).toHaveBeenCalledTimes(1);
    expect(check.mock.calls[0]).toEqual(['W'.repeat(44), item!.secret_sha256]);

    expect(unknown.ok).toBe(false);
    expect(wrong.ok).toBe(false);
    if (unknown.ok || wrong.ok) return;
    expect(wrong.holder).toBeNull();
    expect(unknown.holder).toBeNull();
    expect(wrong.error.code).toBe('AUTHENTICATION_REQUIRED');
    expect({ detail: wrong.error.detail, headers: wrong.error.headers }).toEqual({
      detail: unknown.error.detail,
      headers: unknown.error.headers,
    });
  });

  it('authenticateRequest sends the same DynamoDB requests and checks the secret once on both paths, with the same outcome', async () => {
    const run = async (authorization: string, clientIp: string) => {
      const recording = recordingStore(runtime.store);
      const check = vi.fn(secretMatchesHash);
      const outcome = await authenticateRequest(recording.store, clock, {
        authorization: `Bearer ${authorization}`,
        bucket: 'rest-anonymous',
        clientIp,
        secretCheck: check,
      });
      return {
        outcome,
        commands: recording.commands.map((entry) => ({ ...entry, input: entry.input.replaceAll(clientIp, '<ip>') })),
        checks: check.mock.calls.length,
      };
    };
    const unknown = await run(unknownId, '198.51.100.61');
    const wrong = await run(wrongSecret, '198.51.100.62');

    expect(unknown.checks).toBe(1);
    expect(wrong.checks).toBe(1);
    expect(unknown.commands.map((entry) => entry.command)).toEqual(['BatchGetCommand', 'UpdateCommand']);
    expect(wrong.commands).toEqual(unknown.commands);
    expect(unknown.outcome.ok).toBe(false);
    expect(wrong.outcome.ok).toBe(false);
    if (unknown.outcome.ok || wrong.outcome.ok) return;
    expect(wrong.outcome.knownToken).toBeNull();
    expect(unknown.outcome.knownToken).toBeNull();
    expect(wrong.outcome.rate).toEqual(unknown.outcome.rate);
    expect(wrong.outcome.error.code).toBe('AUTHENTICATION_REQUIRED');
    expect({ detail: wrong.outcome.error.detail, headers: wrong.outcome.error.headers }).toEqual({
      detail: unknown.outcome.error.detail,
      headers: unknown.outcome.error.headers,
    });
  });

  it('answers both alike over REST and the tool server: same status, body, headers and DynamoDB requests, nothing written to the team', async () => {
    const restAnswer = async (token: string, sourceIp: string) => {
      const recording = recordingStore(runtime.store);
      const reply = await rest(withStore(runtime, recording.store), {
        method: 'GET',
        path: '/v1/projects',
        token,
        sourceIp,
      });
      const { request_id: _requestId, ...body } = reply.json as Record<string, unknown>;
      const { 'x-request-id': _header, ...headers } = reply.headers;
      return {
        status: reply.status,
        body,
        headers,
        commands: recording.commands.map((entry) => ({ ...entry, input: entry.input.replaceAll(sourceIp, '<ip>') })),
      };
    };
    const unknownRest = await restAnswer(unknownId, '198.51.100.71');
    const wrongRest = await restAnswer(wrongSecret, '198.51.100.72');
    expect(unknownRest.status).toBe(401);
    expect(wrongRest).toEqual(unknownRest);

    const mcpAnswer = async (token: string, clientIp: string) => {
      const recording = recordingStore(runtime.store);
      const reply = await mcpPost(withStore(runtime, recording.store), toolsCall(1, 'list_projects'), {
        token,
        clientIp,
        sessionId: randomUUID(),
      });
      const { request_id: _requestId, ...body } = reply.json as Record<string, unknown>;
      const headers: Record<string, string> = {};
      reply.headers.forEach((value, name) => {
        if (name !== 'x-request-id') headers[name] = value;
      });
      return { status: reply.status, body, headers, commands: recording.commands.map((entry) => entry.command) };
    };
    const unknownMcp = await mcpAnswer(unknownId, '198.51.100.73');
    const wrongMcp = await mcpAnswer(wrongSecret, '198.51.100.74');
    expect(unknownMcp.status).toBe(401);
    expect(wrongMcp).toEqual(unknownMcp);

    expect((await listActivity(runtime.store, teamId, { limit: 100 })).data).toEqual([]);
  });
});
