/**
 * Team members (DESIGN D2, D6, D19): invitations (token returned once, stored only as a
 * SHA-256, 7-day expiry, the public accept route with one problem for every bad token and the per-IP
 * anonymous bucket), reads over REST and `list_team_members`, role and group changes, removal (tokens
 * minted on the member's behalf revoked), and tokens minted on behalf of a member (never above the
 * member's abilities). Every event is read from the outbox and checked against its published JSON Schema.
 * Against DynamoDB Local, with an injected clock.
 */

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_ROLE_IDS } from '../../shared/domain/roles/built-in.js';
import { INVITATION_LIFETIME_MS } from '../../shared/domain/team-members/schema.js';
import { domainSnapshot, expectRestProblem, scanTable } from '../support/guarantees.js';
import { seedToken } from '../support/store.js';
import type { OutgoingMail } from '../../shared/mail/port.js';
import { integrationsOf } from '../../shared/integrations.js';
import {
  clock,
  eventsOf,
  freshIp,
  runtime,
  setup,
  typesOf,
  useTeamMembersFixture,
} from '../support/fixtures/team-members.js';

useTeamMembersFixture();

describe('inviting', () => {
  it('e-mails the invitation link to the invitee when the public base URL is known', async () => {
    const t = await setup();
    const sent: OutgoingMail[] = [];
    runtime.mail = {
      async send(mail) {
        sent.push(mail);
        return { messageId: '<1@test>' };
      },
    };
    const integrations = runtime.integrations;
    runtime.integrations = { ...integrationsOf(runtime), publicBaseUrl: 'https://members.example' };
    const member = await t
      .invite({ email: 'grace@example.com', role_ids: [BUILT_IN_ROLE_IDS.developer] })
      .finally(() => {
        runtime.integrations = integrations;
        runtime.mail = undefined;
      });
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toBe('grace@example.com');
    expect(sent[0].text).toContain(`https://members.example${member.invitation_link}`);
  });

  it('creates an invited member and returns the invitation token and link once, stored only as a hash', async () => {
    const t = await setup();
    const member = await t.invite({ email: 'ada@example.com', role_ids: [BUILT_IN_ROLE_IDS.developer] });
    expect(member).toMatchObject({
      email: 'ada@example.com',
      name: 'Ada Lovelace',
      status: 'invited',
      role_ids: [BUILT_IN_ROLE_IDS.developer],
      group_ids: [],
      joined_at: null,
      removed_at: null,
    });
    expect(member.invitation_token).toMatch(/^inv_[0-9A-HJKMNP-TV-Z]{26}_[0-9A-Za-z]{40,64}$/);
    expect(member.invitation_link).toBe(`/dashboard/invitations/accept#token=${member.invitation_token}`);
    expect(Date.parse(member.invitation_expires_at) - clock.nowMs()).toBe(INVITATION_LIFETIME_MS);

    const read = await t.call('GET', `/v1/team-members/${member.id}`);
    expect(read.status).toBe(200);
    expect(read.json).not.toHaveProperty('invitation_token');
    const { invitation_token: _token, invitation_link: _link, ...publicFields } = member;
    expect(read.json).toEqual(publicFields);

    const events = await eventsOf(t.team.id);
    expect(typesOf(events)).toEqual(['team.created', 'team.member_invited']);
    expect(events[1].data).toEqual({ team: expect.objectContaining({ id: t.team.id }), team_member: publicFields });

    const secret = member.invitation_token.split('_').at(-1);
    const everything = JSON.stringify(await scanTable(runtime.store));
    expect(everything).not.toContain(secret);
    expect(everything).not.toContain(member.invitation_token);
  });

  it('replays an invitation with the same Idempotency-Key, token included, and writes nothing more', async () => {
    const t = await setup();
    const headers = { 'Idempotency-Key': randomUUID() };
    const body = { email: 'replay@example.com', name: 'Re Play', role_ids: [BUILT_IN_ROLE_IDS.viewer] };
    const first = await t.call('POST', '/v1/team-members/invitations', body, { headers });
    expect(first.status).toBe(201);
    const before = await domainSnapshot(runtime.store);
    const again = await t.call('POST', '/v1/team-members/invitations', body, { headers });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replay']).toBe('true');
    expect(again.json).toEqual(first.json);
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('keeps e-mail addresses unique among invited and active members, whatever their case', async () => {
    const t = await setup();
    await t.invite({ email: 'grace@example.com' });
    const before = await domainSnapshot(runtime.store);
    const duplicate = await t.call('POST', '/v1/team-members/invitations', {
      email: 'Grace@Example.com',
      name: 'Grace',
      role_ids: [BUILT_IN_ROLE_IDS.viewer],
    });
    expectRestProblem(duplicate, 'CONFLICT');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });

  it('refuses unknown fields, bad addresses, unknown roles, and roles or groups the caller may not give', async () => {
    const t = await setup();
    const noAssign = await seedToken(runtime.store, clock, { teamId: t.team.id, abilities: ['team-member:invite'] });
    const weakAssigner = await seedToken(runtime.store, clock, {
      teamId: t.team.id,
      abilities: ['team-member:invite', 'role:assign', 'team:view'],
    });
    const before = await domainSnapshot(runtime.store);
    const base = { email: 'x@example.com', name: 'X', role_ids: [BUILT_IN_ROLE_IDS.viewer] };
    expectRestProblem(
      await t.call('POST', '/v1/team-members/invitations', { ...base, team_id: randomUUID() }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await t.call('POST', '/v1/team-members/invitations', { ...base, email: 'not an address' }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await t.call('POST', '/v1/team-members/invitations', { ...base, role_ids: [] }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await t.call('POST', '/v1/team-members/invitations', { ...base, role_ids: [randomUUID()] }),
      'NOT_FOUND',
    );
    expectRestProblem(
      await t.call('POST', '/v1/team-members/invitations', { ...base, group_ids: [randomUUID()] }),
      'NOT_FOUND',
    );
    // A token that may invite but not assign roles; and one that may assign, but not beyond itself.
    const refused = expectRestProblem(
      await t.call('POST', '/v1/team-members/invitations', base, { token: noAssign.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expect(refused.detail).toContain('role:assign');
    const beyond = expectRestProblem(
      await t.call('POST', '/v1/team-members/invitations', base, { token: weakAssigner.token }),
      'TOKEN_MISSING_ABILITY',
    );
    expect(beyond.detail).toContain('project:view-any');
    expect(await domainSnapshot(runtime.store)).toEqual(before);
  });
});

describe('accepting an invitation (public route)', () => {
  it('activates the member with the token alone, once; every bad token gets the same problem', async () => {
    const t = await setup();
    const member = await t.invite({ email: 'joiner@example.com' });
    const accepted = await t.accept(member.invitation_token);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.headers['x-ratelimit-limit']).toBe('5');
    expect(accepted.json.team).toMatchObject({ id: t.team.id, name: t.team.name, deleted_at: null });
    expect(accepted.json.team_member).toMatchObject({
      id: member.id,
      status: 'active',
      joined_at: new Date(clock.nowMs()).toISOString(),
      invitation_expires_at: null,
    });
    expect(typesOf(await eventsOf(t.team.id)).at(-1)).toBe('team.member_joined');

    const id = member.invitation_token.split('_')[1];
    const bad = [
      member.invitation_token, // used
      `inv_${id}_${'A'.repeat(44)}`, // forged secret
      `inv_01ARZ3NDEKTSV4RRFFQ69G5FAV_${'b'.repeat(44)}`, // unknown
      'not-a-token',
    ];
    const details = new Set<string>();
    for (const token of bad) {
      const before = await domainSnapshot(runtime.store);
      const reply = await t.accept(token);
      details.add(expectRestProblem(reply, 'NOT_FOUND').detail);
      expect(reply.text).not.toContain(token);
      expect(await domainSnapshot(runtime.store)).toEqual(before);
    }
    expect(details.size).toBe(1);
  });

  it('lets only one of two simultaneous acceptances of the same token through', async () => {
    const t = await setup();
    const member = await t.invite({ email: 'twice@example.com' });
    const replies = await Promise.all([t.accept(member.invitation_token), t.accept(member.invitation_token)]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 404]);
    expect((await eventsOf(t.team.id)).filter((event) => event.type === 'team.member_joined')).toHaveLength(1);
  });

  it('refuses an expired invitation with the same problem, and accepts until the last millisecond', async () => {
    const t = await setup();
    const late = await t.invite({ email: 'late@example.com' });
    const onTime = await t.invite({ email: 'ontime@example.com' });
    clock.advance(INVITATION_LIFETIME_MS - 1);
    expect((await t.accept(onTime.invitation_token)).status).toBe(200);
    clock.advance(1);
    const reply = await t.accept(late.invitation_token);
    expectRestProblem(reply, 'NOT_FOUND');
    expect((await t.call('GET', `/v1/team-members/${late.id}`)).json.status).toBe('invited');
  });

  it('counts every call in the per-IP anonymous bucket (5 per minute)', async () => {
    const t = await setup();
    const ip = freshIp();
    const replies = [];
    for (let index = 0; index < 6; index++)
      replies.push(await t.accept(`inv_01ARZ3NDEKTSV4RRFFQ69G5FAV_${'c'.repeat(44)}`, ip));
    for (const reply of replies.slice(0, 5)) expectRestProblem(reply, 'NOT_FOUND');
    const limited = expectRestProblem(replies[5], 'RATE_LIMITED');
    expect(limited.status).toBe(429);
    expect(replies[5].headers['retry-after']).toMatch(/^\d+$/);
  });

  it('refuses an invitation of a removed member', async () => {
    const t = await setup();
    const member = await t.invite({ email: 'gone@example.com' });
    expect((await t.call('DELETE', `/v1/team-members/${member.id}`)).status).toBe(200);
    expectRestProblem(await t.accept(member.invitation_token), 'NOT_FOUND');
  });
});
