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
import { type ErrorCode } from '../../shared/catalogues/error-codes.js';
import { MAX_BODY_BYTES } from '../../shared/http/rest-handler.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { expectFieldErrors, randomIp, runtime, world, useErrorsFixture } from '../support/fixtures/errors.js';

useErrorsFixture();

const json = { 'Content-Type': 'application/json' };

/** [what, call, expected code, expected field paths (VALIDATION_FAILED)] */
type RestCase = [string, () => Parameters<typeof rest>[1], ErrorCode, string[]?];

const restCases: RestCase[] = [
  [
    'malformed JSON',
    () => ({ method: 'POST', path: '/v1/projects', token: world.a.token, body: '{"name": "x",', headers: json }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'JSON with a trailing comma',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: '{"name":"x","platform_type":"discord",}',
      headers: json,
    }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'a text/plain body',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: '{"name":"x"}',
      headers: { 'Content-Type': 'text/plain' },
    }),
    'UNSUPPORTED_MEDIA_TYPE',
  ],
  [
    'a body without content type',
    () => ({ method: 'POST', path: '/v1/projects', token: world.a.token, body: '{"name":"x"}' }),
    'UNSUPPORTED_MEDIA_TYPE',
  ],
  [
    'a multipart body',
    () => ({
      method: 'POST',
      path: '/v1/tokens',
      token: world.a.token,
      body: '--x\r\n',
      headers: { 'Content-Type': 'multipart/form-data; boundary=x' },
    }),
    'UNSUPPORTED_MEDIA_TYPE',
  ],
  [
    'a body one byte over 256 KiB',
    () => ({
      method: 'POST',
      path: '/v1/tokens',
      token: world.a.token,
      body: ' '.repeat(MAX_BODY_BYTES + 1),
      headers: json,
    }),
    'PAYLOAD_TOO_LARGE',
  ],
  [
    'a null body',
    () => ({ method: 'POST', path: '/v1/projects', token: world.a.token, body: 'null', headers: json }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'an array body',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: [{ name: 'x', platform_type: 'discord' }],
    }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'a string body',
    () => ({ method: 'POST', path: '/v1/webhook-endpoints', token: world.a.token, body: '"hello"', headers: json }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'a number body',
    () => ({
      method: 'POST',
      path: '/v1/webhook-deliveries/replay-dead',
      token: world.a.token,
      body: '24',
      headers: json,
    }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'an empty body where one is required',
    () => ({ method: 'POST', path: '/v1/projects', token: world.a.token }),
    'VALIDATION_FAILED',
    ['body.name', 'body.platform_type'],
  ],
  [
    'an unknown field',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: 'x', platform_type: 'discord', owner: 'me' },
    }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'a NUL in a project name',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: 'Book\u0000club', platform_type: 'web' },
    }),
    'VALIDATION_FAILED',
    ['body.name'],
  ],
  [
    'an unpaired surrogate in a project name',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: 'Book \ud800 club', platform_type: 'web' },
    }),
    'VALIDATION_FAILED',
    ['body.name'],
  ],
  [
    'an escape character in a description',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: 'Club', description: 'Read \u001b[31mred', platform_type: 'web' },
    }),
    'VALIDATION_FAILED',
    ['body.description'],
  ],
  [
    'a line break in a token name',
    () => ({
      method: 'POST',
      path: '/v1/tokens',
      token: world.a.token,
      body: { name: 'ci\nbot', abilities: ['team:view'] },
    }),
    'VALIDATION_FAILED',
    ['body.name'],
  ],
  [
    'wrong types',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      body: { name: 7, platform_type: ['discord'] },
    }),
    'VALIDATION_FAILED',
    ['body.name', 'body.platform_type'],
  ],
  [
    'an http:// webhook URL',
    () => ({
      method: 'POST',
      path: '/v1/webhook-endpoints',
      token: world.a.token,
      body: { name: 'x', url: 'http://a.example/h', events: ['project.created'] },
    }),
    'VALIDATION_FAILED',
    ['body.url'],
  ],
  [
    'an unknown event name',
    () => ({
      method: 'POST',
      path: '/v1/webhook-endpoints',
      token: world.a.token,
      body: { name: 'x', url: 'https://a.example/h', events: ['project.exploded'] },
    }),
    'VALIDATION_FAILED',
    ['body.events.0'],
  ],
  [
    'since_hours as a string',
    () => ({
      method: 'POST',
      path: '/v1/webhook-deliveries/replay-dead',
      token: world.a.token,
      body: { since_hours: '24' },
    }),
    'VALIDATION_FAILED',
    ['body.since_hours'],
  ],
  [
    'an unknown ability to mint',
    () => ({ method: 'POST', path: '/v1/tokens', token: world.a.token, body: { abilities: ['root:everything'] } }),
    'VALIDATION_FAILED',
    ['body.abilities.0'],
  ],
  [
    'a body on a DELETE',
    () => ({
      method: 'DELETE',
      path: `/v1/webhook-endpoints/${world.a.endpoint.id}`,
      token: world.a.token,
      body: { force: true },
    }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'a body on a body-less POST',
    () => ({
      method: 'POST',
      path: `/v1/webhook-endpoints/${world.a.endpoint.id}/rotate-secret`,
      token: world.a.token,
      body: { secret: 'mine' },
    }),
    'VALIDATION_FAILED',
    ['body'],
  ],
  [
    'an unknown query parameter',
    () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { sort: 'name' } }),
    'VALIDATION_FAILED',
    ['query'],
  ],
  [
    'a query on a route without one',
    () => ({ method: 'GET', path: '/v1/teams/current', token: world.a.token, query: { expand: 'all' } }),
    'VALIDATION_FAILED',
    ['query.expand'],
  ],
  [
    'limit 1000',
    () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { limit: '1000' } }),
    'VALIDATION_FAILED',
    ['query.limit'],
  ],
  [
    'limit 0',
    () => ({ method: 'GET', path: '/v1/tokens', token: world.a.token, query: { limit: '0' } }),
    'VALIDATION_FAILED',
    ['query.limit'],
  ],
  [
    'limit -5',
    () => ({ method: 'GET', path: '/v1/activity', token: world.a.token, query: { limit: '-5' } }),
    'VALIDATION_FAILED',
    ['query.limit'],
  ],
  [
    'limit 2.5',
    () => ({ method: 'GET', path: '/v1/webhook-endpoints', token: world.a.token, query: { limit: '2.5' } }),
    'VALIDATION_FAILED',
    ['query.limit'],
  ],
  [
    'limit abc',
    () => ({ method: 'GET', path: '/v1/webhook-deliveries', token: world.a.token, query: { limit: 'abc' } }),
    'VALIDATION_FAILED',
    ['query.limit'],
  ],
  [
    'limit 1e9',
    () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { limit: '1e9' } }),
    'VALIDATION_FAILED',
    ['query.limit'],
  ],
  [
    'a repeated limit',
    () => ({ method: 'GET', path: '/v1/projects', token: world.a.token, query: { limit: '5,6' } }),
    'VALIDATION_FAILED',
    ['query.limit'],
  ],
  [
    'an activity token_id that is not a token id',
    () => ({ method: 'GET', path: '/v1/activity', token: world.a.token, query: { token_id: 'x'.repeat(30) } }),
    'VALIDATION_FAILED',
    ['query.token_id'],
  ],
  [
    'a delivery status outside the enum',
    () => ({ method: 'GET', path: '/v1/webhook-deliveries', token: world.a.token, query: { status: 'exploded' } }),
    'VALIDATION_FAILED',
    ['query.status'],
  ],
  [
    'a project id that is not a UUID',
    () => ({ method: 'GET', path: '/v1/projects/42', token: world.a.token }),
    'VALIDATION_FAILED',
    ['path.project_id'],
  ],
  [
    'a delivery id that is not dlv_+ULID',
    () => ({ method: 'GET', path: '/v1/webhook-deliveries/evt_123', token: world.a.token }),
    'VALIDATION_FAILED',
    ['path.id'],
  ],
  [
    'a token id that is not a ULID',
    () => ({ method: 'DELETE', path: '/v1/tokens/not-a-ulid', token: world.a.token }),
    'VALIDATION_FAILED',
    ['path.id'],
  ],
  [
    'broken percent-encoding in the path',
    () => ({ method: 'GET', path: '/v1/projects/%E0%A4%A', token: world.a.token }),
    'NOT_FOUND',
  ],
  [
    'an encoded slash in an id',
    () => ({ method: 'GET', path: `/v1/projects/${randomUUID()}%2Fx`, token: world.a.token }),
    'VALIDATION_FAILED',
    ['path.project_id'],
  ],
  ['an unknown route', () => ({ method: 'GET', path: '/v2/projects', token: world.a.token }), 'NOT_FOUND'],
  ['a trailing slash', () => ({ method: 'GET', path: '/v1/projects/', token: world.a.token }), 'NOT_FOUND'],
  ['the root', () => ({ method: 'GET', path: '/' }), 'NOT_FOUND'],
  [
    'an unknown method',
    () => ({ method: 'PATCH', path: `/v1/webhook-endpoints/${world.a.endpoint.id}`, token: world.a.token, body: {} }),
    'METHOD_NOT_ALLOWED',
  ],
  ['OPTIONS on REST', () => ({ method: 'OPTIONS', path: '/v1/projects' }), 'METHOD_NOT_ALLOWED'],
  [
    'an Idempotency-Key that is not a UUID',
    () => ({
      method: 'POST',
      path: '/v1/projects',
      token: world.a.token,
      headers: { 'Idempotency-Key': 'again' },
      body: { name: 'x', platform_type: 'discord' },
    }),
    'VALIDATION_FAILED',
    ['header.idempotency-key'],
  ],
  [
    'Basic authentication',
    () => ({
      method: 'GET',
      path: '/v1/projects',
      headers: { Authorization: 'Basic dXNlcjpwYXNz' },
      sourceIp: randomIp(),
    }),
    'AUTHENTICATION_REQUIRED',
  ],
  [
    'a bare Bearer',
    () => ({ method: 'GET', path: '/v1/projects', headers: { Authorization: 'Bearer' }, sourceIp: randomIp() }),
    'AUTHENTICATION_REQUIRED',
  ],
  [
    'a token with the right shape and a wrong secret',
    () => ({ method: 'GET', path: '/v1/projects', token: `${world.a.token.slice(0, -4)}AAAA`, sourceIp: randomIp() }),
    'AUTHENTICATION_REQUIRED',
  ],
];

describe('bad REST input never gives a 500, and never writes', () => {
  for (const [what, call, code, paths] of restCases) {
    it(`${what} → ${code}`, async () => {
      const before = await domainSnapshot(runtime.store);
      const reply = await rest(runtime, call());
      const problem = expectRestProblem(reply, code);
      if (paths) expectFieldErrors(problem.errors, paths);
      expect(await domainSnapshot(runtime.store)).toEqual(before);
    });
  }
});
