/**
 * Discord (DESIGN D28) with `@discordjs/rest` pointed at a loopback fake of the Discord API: connecting a bot
 * (GET /users/@me, the /membership command, the token and client secret stored encrypted and never
 * returned; refusals and outages change nothing), linking a server and its roles (checked with Discord),
 * access following the subscription through the plan's roles, ban / unban / kick, an outage recorded on the
 * member and reconciled by the deadline worker, and the interactions hook (Ed25519 signatures, PING,
 * /membership). Against DynamoDB Local; every event is checked against its published schema.
 */

import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { completeDiscordLink } from '../../shared/domain/members/discord-link.js';
import { PLATFORM_SYNC_FIRST_DELAY_MS } from '../../shared/domain/members/platform-retry.js';
import { keys } from '../../shared/store/keys.js';
import { TOKEN_LIFETIME_SECONDS } from '../support/discord-api.js';
import { domainSnapshot } from '../support/guarantees.js';
import {
  APPLICATION_ID,
  CLIENT_SECRET,
  GUILD_ID,
  OTHER_ROLE_ID,
  ROLE_ID,
  SESSION,
  USER_ID,
  authorize,
  call,
  clock,
  connectAndLink,
  connectBody,
  discord,
  newEvents,
  page,
  portalCookie,
  projectId,
  redirectUri,
  roles,
  runtime,
  subscribed,
  subscribedWithPlan,
  useDiscordFixture,
} from '../support/fixtures/discord.js';
import { DAY_MS } from '../../shared/clock.js';

useDiscordFixture();

describe('linking a Discord account (OAuth2)', () => {
  it('records a failed server join as platform_error and lets the deadline worker join them with their roles, on the members’ backoff', async () => {
    const subscriberId = await subscribed();
    // Discord is down for the link and the first retry (each call: the first try and the client's 2 retries).
    discord.failNext(`PUT /guilds/${GUILD_ID}/members/${USER_ID}`, {
      status: 503,
      message: 'Service Unavailable',
      times: 6,
    });
    const { code, state } = await authorize(
      subscriberId,
      { id: USER_ID, username: 'ada' },
      `user-access-${randomBytes(8).toString('hex')}`,
    );
    const result = await completeDiscordLink(runtime, {
      projectId,
      portalSessionId: SESSION,
      subscriberId,
      code,
      state,
    });
    expect(result).toMatchObject({
      guild: 'failed',
      reason: expect.stringContaining('Discord could not serve PUT /guilds/{guild}/members/{user} (503)'),
    });
    expect(discord.guild(GUILD_ID).members.has(USER_ID)).toBe(false);
    const memberId = result.member.id;
    const linkedAt = clock.nowMs();
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toEqual({
      action: 'grant_access',
      message: expect.stringContaining('(503)'),
      at: new Date(linkedAt).toISOString(),
      attempts: 1,
      next_attempt_at: new Date(linkedAt + PLATFORM_SYNC_FIRST_DELAY_MS).toISOString(),
    });

    clock.advance(PLATFORM_SYNC_FIRST_DELAY_MS);
    expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toMatchObject({
      attempts: 2,
      next_attempt_at: new Date(clock.nowMs() + 2 * PLATFORM_SYNC_FIRST_DELAY_MS).toISOString(),
    });
    expect(discord.guild(GUILD_ID).members.has(USER_ID)).toBe(false);

    clock.advance(2 * PLATFORM_SYNC_FIRST_DELAY_MS);
    expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 1, failed: 0 });
    expect(roles()).toEqual([ROLE_ID]);
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toBeNull();
    clock.advance(DAY_MS);
    expect(await applyDueDeadlines(runtime, clock.nowMs())).toEqual({ applied: 0, failed: 0 });
  });

  it('refreshes expired OAuth2 tokens before the server join, storing the new ones sealed', async () => {
    const { subscriberId, planId, subscriptionId } = await subscribedWithPlan();
    const first = `user-access-${randomBytes(8).toString('hex')}`;
    const { code, state } = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, first);
    expect(
      (await completeDiscordLink(runtime, { projectId, portalSessionId: SESSION, subscriberId, code, state })).guild,
    ).toBe('joined');
    const stored = await runtime.store.get(keys.credential(projectId, `discord_user#${subscriberId}`));
    expect(stored!.public).toMatchObject({
      platform_user_id: USER_ID,
      expires_at: new Date(clock.nowMs() + TOKEN_LIFETIME_SECONDS * 1000).toISOString(),
    });
    const firstRefresh = discord.callsOf('POST /oauth2/token').at(-1)!;

    // The user leaves the server; eight days later (tokens expired) their membership starts again.
    discord.guild(GUILD_ID).members.delete(USER_ID);
    clock.advance(8 * DAY_MS);
    expect(
      (await call('POST', `/v1/subscriptions/${subscriptionId}/cancel`, { at_period_end: false })).json.status,
    ).toBe('canceled');
    const since = discord.calls.length;
    expect(
      (await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId }))
        .status,
    ).toBe(201);
    const made = discord.calls.slice(since);
    expect(made.map((entry) => entry.route)).toEqual([
      `GET /guilds/${GUILD_ID}/members/${USER_ID}`,
      'POST /oauth2/token',
      `PUT /guilds/${GUILD_ID}/members/${USER_ID}`,
      `PUT /guilds/${GUILD_ID}/members/${USER_ID}/roles/${ROLE_ID}`,
    ]);
    const refresh = made[1].body as { refresh_token: string };
    expect(refresh).toMatchObject({
      grant_type: 'refresh_token',
      client_id: APPLICATION_ID,
      client_secret: CLIENT_SECRET,
      refresh_token: expect.stringMatching(/^refresh-/),
    });
    expect(firstRefresh.body).toMatchObject({ grant_type: 'authorization_code' });
    const renewed = discord.accessTokenOf(USER_ID)!;
    expect(renewed).not.toBe(first);
    expect(made[2].body).toEqual({ access_token: renewed, roles: [] });
    expect(roles()).toEqual([ROLE_ID]);
    const restored = await runtime.store.get(keys.credential(projectId, `discord_user#${subscriberId}`));
    expect(restored).toMatchObject({
      secret_names: ['access_token', 'refresh_token'],
      public: { expires_at: new Date(clock.nowMs() + TOKEN_LIFETIME_SECONDS * 1000).toISOString() },
    });
    const everything = JSON.stringify(await domainSnapshot(runtime.store)) + JSON.stringify(await newEvents());
    expect(everything).not.toContain(renewed);
    expect(everything).not.toContain(refresh.refresh_token);

    // Still in the server when the next grant comes, tokens expired again: no refresh, no join.
    const latest = (await call('GET', `/v1/subscribers/${subscriberId}`)).json;
    clock.advance(8 * DAY_MS);
    const current = (
      await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, {
        query: { subscriber_id: subscriberId },
      })
    ).json.data.find((candidate: { status: string }) => candidate.status === 'active');
    await call('POST', `/v1/subscriptions/${current.id}/cancel`, { at_period_end: false });
    const later = discord.calls.length;
    expect(
      (await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId }))
        .status,
    ).toBe(201);
    expect(discord.calls.slice(later).map((entry) => entry.route)).toEqual([
      `GET /guilds/${GUILD_ID}/members/${USER_ID}`,
      `PUT /guilds/${GUILD_ID}/members/${USER_ID}/roles/${ROLE_ID}`,
    ]);
    expect((await call('GET', `/v1/members/${latest.member_id}`)).json.platform_error).toBeNull();
  });

  it('a refused refresh leaves the member needing to link again, shown on the portal, until they do', async () => {
    const { subscriberId, planId, subscriptionId } = await subscribedWithPlan();
    const { code, state } = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-revoked-later');
    const memberId = (
      await completeDiscordLink(runtime, { projectId, portalSessionId: SESSION, subscriberId, code, state })
    ).member.id;
    discord.guild(GUILD_ID).members.delete(USER_ID);
    discord.revokeRefreshTokens(USER_ID);
    clock.advance(8 * DAY_MS);
    await call('POST', `/v1/subscriptions/${subscriptionId}/cancel`, { at_period_end: false });
    expect(
      (await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriberId, plan_id: planId }))
        .status,
    ).toBe(201);
    expect(discord.guild(GUILD_ID).members.has(USER_ID)).toBe(false);
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toMatchObject({
      action: 'grant_access',
      message: expect.stringContaining('must link their Discord account again'),
    });
    expect(await runtime.store.get(keys.credential(projectId, `discord_user#${subscriberId}`))).toMatchObject({
      secret_names: [],
      public: { link_state: 'relink_required' },
    });
    const cookie = await portalCookie(subscriberId);
    const portal = await page(`/portal/${projectId}`, cookie);
    expect(portal.body).toContain('link your Discord account again');
    expect(portal.body).toContain('Link your Discord account again');

    // Linking again stores fresh tokens, joins them with their roles and clears the error.
    const again = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-fresh');
    expect(
      (
        await completeDiscordLink(runtime, {
          projectId,
          portalSessionId: SESSION,
          subscriberId,
          code: again.code,
          state: again.state,
        })
      ).guild,
    ).toBe('joined');
    expect(roles()).toEqual([ROLE_ID]);
    expect((await call('GET', `/v1/members/${memberId}`)).json.platform_error).toBeNull();
    expect((await page(`/portal/${projectId}`, cookie)).body).toContain('Your Discord account is linked.');
  });

  it('deletes the subscribers\u2019 Discord tokens with the project, and with the bot when it is disconnected', async () => {
    const { subscriberId, subscriptionId } = await subscribedWithPlan();
    const { code, state } = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-of-ada');
    await completeDiscordLink(runtime, { projectId, portalSessionId: SESSION, subscriberId, code, state });
    const userCredential = keys.credential(projectId, `discord_user#${subscriberId}`);
    expect(await runtime.store.get(userCredential)).toBeDefined();
    expect((await call('DELETE', `/v1/projects/${projectId}/bot`)).status).toBe(200);
    expect(await runtime.store.get(userCredential)).toBeUndefined();

    // Linked again once the bot is back, then the project is deleted (its subscription ended first).
    expect((await call('PUT', `/v1/projects/${projectId}/bot`, connectBody())).status).toBe(200);
    const again = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-of-ada-2');
    await completeDiscordLink(runtime, {
      projectId,
      portalSessionId: SESSION,
      subscriberId,
      code: again.code,
      state: again.state,
    });
    expect(await runtime.store.get(userCredential)).toBeDefined();
    expect(
      (await call('POST', `/v1/subscriptions/${subscriptionId}/cancel`, { at_period_end: false })).json.status,
    ).toBe('canceled');
    expect((await call('DELETE', `/v1/projects/${projectId}`)).status).toBe(200);
    const left = await runtime.store.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': userCredential.pk },
    });
    expect(left.items).toEqual([]);
  });

  it('linking another account replaces the stored tokens: the old account\u2019s token is gone', async () => {
    const subscriberId = await subscribed();
    const first = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-first-account');
    await completeDiscordLink(runtime, {
      projectId,
      portalSessionId: SESSION,
      subscriberId,
      code: first.code,
      state: first.state,
    });
    const second = await authorize(
      subscriberId,
      { id: '700000000000000002', username: 'ada2' },
      'token-second-account',
    );
    await completeDiscordLink(runtime, {
      projectId,
      portalSessionId: SESSION,
      subscriberId,
      code: second.code,
      state: second.state,
    });
    expect(roles()).toEqual([]);
    const credentials = await runtime.store.query({
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.credential(projectId, 'x').pk },
    });
    const users = credentials.items.filter((item) => item.kind === 'discord_user');
    expect(users).toHaveLength(1);
    expect(users[0].public).toMatchObject({ platform_user_id: '700000000000000002' });
  });

  it('end to end: linked from the portal, joined with the plan\u2019s role; canceled and ended by the clock, the role goes; a ban bans', async () => {
    await connectAndLink();
    expect(
      (await call('POST', `/v1/projects/${projectId}/resources`, { kind: 'role', platform_resource_id: OTHER_ROLE_ID }))
        .status,
    ).toBe(201);
    const plan = (
      await call('POST', `/v1/projects/${projectId}/plans`, {
        name: 'VIP',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
        platform_role_ids: [OTHER_ROLE_ID],
      })
    ).json;
    const subscriber = (await call('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'Ada' })).json;
    const subscription = (
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriber.id, plan_id: plan.id })
    ).json;
    const cookie = await portalCookie(subscriber.id);
    const start = await page(`/portal/${projectId}/discord/link`, cookie);
    const state = new URL(String(start.headers.Location)).searchParams.get('state')!;
    const code = `code-${randomBytes(6).toString('hex')}`;
    discord.addCode(code, {
      clientId: APPLICATION_ID,
      redirectUri: redirectUri(),
      user: { id: USER_ID, username: 'ada' },
      accessToken: `user-access-${randomBytes(8).toString('hex')}`,
    });
    expect(
      (await page(`/portal/${projectId}/discord/callback?code=${code}&state=${state}`, cookie)).headers.Location,
    ).toBe(`/portal/${projectId}?discord=joined`);
    expect(roles()).toEqual([OTHER_ROLE_ID]);

    expect(
      (await call('POST', `/v1/subscriptions/${subscription.id}/cancel`, { at_period_end: true })).json.status,
    ).toBe('pending_cancellation');
    clock.set(Date.parse(subscription.current_period_end) + 1000);
    await applyDueDeadlines(runtime, clock.nowMs());
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`)).json.status).toBe('canceled');
    expect(roles()).toEqual([]);
    expect(discord.guild(GUILD_ID).members.has(USER_ID)).toBe(true);

    expect((await call('POST', `/v1/subscribers/${subscriber.id}/ban`, { reason: 'spam' })).json.member).toMatchObject({
      status: 'banned',
      platform_error: null,
    });
    expect(discord.guild(GUILD_ID).bans.has(USER_ID)).toBe(true);
    expect(discord.guild(GUILD_ID).members.has(USER_ID)).toBe(false);
  });
});
