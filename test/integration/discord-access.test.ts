/**
 * Discord (DESIGN D28) with `@discordjs/rest` pointed at a loopback fake of the Discord API: connecting a bot
 * (GET /users/@me, the /membership command, the token and client secret stored encrypted and never
 * returned; refusals and outages change nothing), linking a server and its roles (checked with Discord),
 * access following the subscription through the plan's roles, ban / unban / kick, an outage recorded on the
 * member and reconciled by the deadline worker, and the interactions hook (Ed25519 signatures, PING,
 * /membership). Against DynamoDB Local; every event is checked against its published schema.
 */

import { describe, expect, it } from 'vitest';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { PLATFORM_SYNC_FIRST_DELAY_MS } from '../../shared/domain/members/platform-retry.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { expectRestProblem } from '../support/guarantees.js';
import {
  FOREIGN_ROLE_ID,
  GUILD_ID,
  OTHER_ROLE_ID,
  ROLE_ID,
  USER_ID,
  botToken,
  call,
  clock,
  connectAndLink,
  discord,
  newEvents,
  projectId,
  roles,
  runtime,
  team,
  types,
  useDiscordFixture,
} from '../support/fixtures/discord.js';
import { createMonthlyPlan } from '../support/monthly-plan.js';

useDiscordFixture();

describe('access through the adapter', () => {
  /** Connects and links, creates a plan and a subscriber linked to Discord user USER_ID (a member, in the guild). */
  async function setUp() {
    await connectAndLink();
    const plan = await createMonthlyPlan(call, projectId);
    const subscriber = (await call('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'Ada' })).json;
    // What account linking does: the Discord user joins and is linked to the subscriber.
    await recordPlatformMembership(runtime, {
      teamId: team.team.id,
      projectId,
      platformUserId: USER_ID,
      change: 'joined',
      invitedSubscriberId: subscriber.id,
      username: 'ada',
    });
    discord.guild(GUILD_ID).members.set(USER_ID, new Set());
    discord.guild(GUILD_ID).bans.delete(USER_ID);
    const memberId = (await call('GET', `/v1/subscribers/${subscriber.id}`)).json.member_id as string;
    expect(memberId).toEqual(expect.any(String));
    await newEvents();
    return { planId: plan.id, subscriberId: subscriber.id as string, memberId };
  }

  it('adds the role when access starts and removes it when the canceled period ends (deadline worker)', async () => {
    const { planId, subscriberId } = await setUp();
    const created = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriberId,
      plan_id: planId,
    });
    expect(created.status).toBe(201);
    expect(roles()).toEqual([ROLE_ID]);
    expect(types(await newEvents())).toEqual([
      'subscription.created',
      'member.access_granted',
      'member.access_granted',
      'member.converted',
    ]);

    expect(
      (await call('POST', `/v1/subscriptions/${created.json.id}/cancel`, { at_period_end: true })).json.status,
    ).toBe('pending_cancellation');
    expect(roles()).toEqual([ROLE_ID]);
    const since = discord.calls.length;
    clock.set(Date.parse(created.json.current_period_end) + 1000);
    await applyDueDeadlines(runtime, clock.nowMs());
    expect((await call('GET', `/v1/subscriptions/${created.json.id}`)).json.status).toBe('canceled');
    expect(roles()).toEqual([]);
    expect(
      discord.calls
        .slice(since)
        .filter((entry) => entry.route === `DELETE /guilds/${GUILD_ID}/members/${USER_ID}/roles/${ROLE_ID}`),
    ).toHaveLength(1);
  });

  it('refuses @everyone (the server id) as a role: every member holds it', async () => {
    await setUp();
    const refused = expectRestProblem(
      await call('POST', `/v1/projects/${projectId}/resources`, { kind: 'role', platform_resource_id: GUILD_ID }),
      'VALIDATION_FAILED',
    );
    expect(refused.errors).toEqual([
      { path: 'platform_resource_id', message: '@everyone (the server id) cannot be a membership role' },
    ]);
    expect(refused.detail).toContain('@everyone');
  });

  it('grants only the roles a plan names (platform_role_ids), which must be linked roles; null goes back to every linked role', async () => {
    const { subscriberId } = await setUp();
    expect(
      (await call('POST', `/v1/projects/${projectId}/resources`, { kind: 'role', platform_resource_id: OTHER_ROLE_ID }))
        .status,
    ).toBe(201);
    const plans = `/v1/projects/${projectId}/plans`;
    const unknown = expectRestProblem(
      await call('POST', plans, {
        name: 'VIP',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
        platform_role_ids: [FOREIGN_ROLE_ID],
      }),
      'VALIDATION_FAILED',
    );
    expect(unknown.errors).toEqual([{ path: 'platform_role_ids', message: `not linked roles: ${FOREIGN_ROLE_ID}` }]);
    const vip = (
      await call('POST', plans, {
        name: 'VIP',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
        platform_role_ids: [OTHER_ROLE_ID],
      })
    ).json;
    expect(vip.platform_role_ids).toEqual([OTHER_ROLE_ID]);
    await newEvents();
    const created = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriberId,
      plan_id: vip.id,
    });
    expect(created.status).toBe(201);
    expect(roles()).toEqual([OTHER_ROLE_ID]);
    const granted = (await newEvents()).filter((event) => event.type === 'member.access_granted');
    expect(
      granted.map(
        (event) => (event.data as { resource: { platform_resource_id: string } }).resource.platform_resource_id,
      ),
    ).toEqual([GUILD_ID, OTHER_ROLE_ID]);

    const reset = await call('POST', `/v1/plans/${vip.id}`, { platform_role_ids: null });
    expect(reset.status).toBe(200);
    expect(reset.json).not.toHaveProperty('platform_role_ids');
    expect((await call('GET', `/v1/plans/${vip.id}`)).json).not.toHaveProperty('platform_role_ids');
    expect(types(await newEvents())).toEqual(['plan.updated']);
  });

  /** Links OTHER_ROLE_ID too and makes plans Basic (ROLE_ID) and VIP (OTHER_ROLE_ID); returns their ids. */
  async function perRolePlans() {
    expect(
      (await call('POST', `/v1/projects/${projectId}/resources`, { kind: 'role', platform_resource_id: OTHER_ROLE_ID }))
        .status,
    ).toBe(201);
    const plans = `/v1/projects/${projectId}/plans`;
    const basic = (
      await call('POST', plans, {
        name: 'Basic',
        amount: 500,
        currency: 'EUR',
        interval: 'month',
        platform_role_ids: [ROLE_ID],
      })
    ).json.id as string;
    const vip = (
      await call('POST', plans, {
        name: 'VIP',
        amount: 1500,
        currency: 'EUR',
        interval: 'month',
        platform_role_ids: [OTHER_ROLE_ID],
      })
    ).json.id as string;
    await newEvents();
    return { basic, vip };
  }
  /** The linked role each member.access_* event of `events` is about, by type. */
  const movedRoles = (events: EventEnvelope[], type: string) =>
    events
      .filter((event) => event.type === type)
      .map((event) => (event.data as { resource: { platform_resource_id: string } }).resource.platform_resource_id);

  it('a second plan adds its roles; when one plan ends while another grants access, only the roles no remaining plan grants go', async () => {
    const { subscriberId } = await setUp();
    const { basic, vip } = await perRolePlans();
    const first = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriberId,
      plan_id: basic,
    });
    expect(roles()).toEqual([ROLE_ID]);
    await newEvents();
    const second = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriberId,
      plan_id: vip,
    });
    expect(second.status).toBe(201);
    expect(roles().sort()).toEqual([ROLE_ID, OTHER_ROLE_ID].sort());
    const gained = await newEvents();
    expect(movedRoles(gained, 'member.access_granted')).toEqual([OTHER_ROLE_ID]);

    const since = discord.calls.length;
    expect(
      (await call('POST', `/v1/subscriptions/${first.json.id}/cancel`, { at_period_end: false })).json.status,
    ).toBe('canceled');
    expect(roles()).toEqual([OTHER_ROLE_ID]);
    expect(discord.calls.slice(since).map((entry) => entry.route)).toEqual([
      `DELETE /guilds/${GUILD_ID}/members/${USER_ID}/roles/${ROLE_ID}`,
    ]);
    expect(movedRoles(await newEvents(), 'member.access_revoked')).toEqual([ROLE_ID]);

    expect(
      (await call('POST', `/v1/subscriptions/${second.json.id}/cancel`, { at_period_end: false })).json.status,
    ).toBe('canceled');
    expect(roles()).toEqual([]);
  });

  it('a plan change swaps the roles, and a failed removal is reconciled by the deadline worker', async () => {
    const { subscriberId, memberId } = await setUp();
    const { basic, vip } = await perRolePlans();
    const subscription = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriberId,
      plan_id: basic,
    });
    expect(roles()).toEqual([ROLE_ID]);
    await newEvents();

    const upgraded = await call('POST', `/v1/subscriptions/${subscription.json.id}/change-plan`, { plan_id: vip });
    expect(upgraded.status).toBe(200);
    expect(roles()).toEqual([OTHER_ROLE_ID]);
    const events = await newEvents();
    expect(types(events)).toEqual(['subscription.upgraded', 'member.access_granted', 'member.access_revoked']);
    expect([movedRoles(events, 'member.access_granted'), movedRoles(events, 'member.access_revoked')]).toEqual([
      [OTHER_ROLE_ID],
      [ROLE_ID],
    ]);

    // Back to Basic while Discord cannot remove the VIP role: recorded, then reconciled.
    discord.failNext(`DELETE /guilds/${GUILD_ID}/members/${USER_ID}/roles/${OTHER_ROLE_ID}`, {
      status: 503,
      message: 'Service Unavailable',
      times: 3,
    });
    expect(
      (await call('POST', `/v1/subscriptions/${subscription.json.id}/change-plan`, { plan_id: basic })).status,
    ).toBe(200);
    expect(roles().sort()).toEqual([ROLE_ID, OTHER_ROLE_ID].sort());
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toMatchObject({
      action: 'revoke_access',
      attempts: 1,
    });
    clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
    expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
    expect(roles()).toEqual([ROLE_ID]);
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toBeNull();
  });

  it('bans, unbans and kicks in the linked server', async () => {
    const { subscriberId } = await setUp();
    const since = discord.calls.length;
    expect((await call('POST', `/v1/subscribers/${subscriberId}/ban`, { reason: 'spam' })).json.member).toMatchObject({
      status: 'banned',
      platform_error: null,
    });
    expect(discord.guild(GUILD_ID).bans.has(USER_ID)).toBe(true);
    expect((await call('POST', `/v1/subscribers/${subscriberId}/unban`, {})).json.member).toMatchObject({
      platform_error: null,
    });
    expect(discord.guild(GUILD_ID).bans.has(USER_ID)).toBe(false);
    await recordPlatformMembership(runtime, {
      teamId: team.team.id,
      projectId,
      platformUserId: USER_ID,
      change: 'joined',
    });
    expect((await call('POST', `/v1/subscribers/${subscriberId}/kick`, {})).json.member).toMatchObject({
      status: 'kicked',
      platform_error: null,
    });
    expect(discord.calls.slice(since).map((entry) => entry.route)).toEqual([
      `PUT /guilds/${GUILD_ID}/bans/${USER_ID}`,
      `DELETE /guilds/${GUILD_ID}/bans/${USER_ID}`,
      `DELETE /guilds/${GUILD_ID}/members/${USER_ID}`,
    ]);
  });

  it('waits out a 429 (retry_after), records an outage on the member and reconciles it with the deadline worker once Discord is back', async () => {
    const { planId, subscriberId, memberId } = await setUp();
    discord.rateLimitNext(`PUT /guilds/${GUILD_ID}/members/${USER_ID}/roles/`, 0.01);
    discord.failNext(`PUT /guilds/${GUILD_ID}/members/${USER_ID}/roles/`, {
      status: 503,
      message: 'Service Unavailable',
      times: 3,
    });
    const created = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriberId,
      plan_id: planId,
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ status: 'active', has_access: true });
    expect(roles()).toEqual([]);
    const member = (await call('GET', `/v1/members/${memberId}`)).json;
    expect(member.platform_error).toMatchObject({
      action: 'grant_access',
      message: expect.stringContaining('Discord could not serve PUT /guilds/{guild}/members/{user}/roles/{role}'),
      attempts: 1,
    });
    expect(JSON.stringify(member)).not.toContain(botToken);

    clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
    expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
    expect(roles()).toEqual([ROLE_ID]);
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toBeNull();
  });
});
