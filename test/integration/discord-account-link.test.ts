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
import { completeDiscordLink } from '../../shared/domain/members/discord-link.js';
import { keys } from '../../shared/store/keys.js';
import { domainSnapshot } from '../support/guarantees.js';
import {
  APPLICATION_ID,
  CLIENT_SECRET,
  GUILD_ID,
  ROLE_ID,
  SESSION,
  USER_ID,
  authorize,
  call,
  clock,
  discord,
  newEvents,
  page,
  portalCookie,
  projectId,
  redirectUri,
  roles,
  runtime,
  subscribed,
  types,
  useDiscordFixture,
} from '../support/fixtures/discord.js';

useDiscordFixture();

describe('linking a Discord account (OAuth2)', () => {
  it('sends the user to discord.com with a single-use state, exchanges the code, links the member and adds them to the server with their roles', async () => {
    const subscriberId = await subscribed();
    const accessToken = `user-access-${randomBytes(8).toString('hex')}`;
    const { url, code, state } = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, accessToken);
    expect(`${url.origin}${url.pathname}`).toBe('https://discord.com/oauth2/authorize');
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: APPLICATION_ID,
      response_type: 'code',
      redirect_uri: redirectUri(),
      scope: 'identify guilds.join',
    });
    expect(state).toMatch(/^[A-Za-z0-9_-]{40,}$/);

    // Bound to the portal session and the subscriber: another session cannot use it (and does not use it up).
    await expect(
      completeDiscordLink(runtime, { projectId, portalSessionId: 'another-session', subscriberId, code, state }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const result = await completeDiscordLink(runtime, {
      projectId,
      portalSessionId: SESSION,
      subscriberId,
      code,
      state,
    });
    expect(result).toMatchObject({
      guild: 'joined',
      reason: null,
      member: { platform_user_id: USER_ID, subscriber_id: subscriberId, status: 'joined', username: 'ada' },
    });
    expect(discord.callsOf('POST /oauth2/token').at(-1)!.body).toMatchObject({
      grant_type: 'authorization_code',
      code,
      client_id: APPLICATION_ID,
      client_secret: CLIENT_SECRET,
      redirect_uri: redirectUri(),
    });
    expect(discord.callsOf(`PUT /guilds/${GUILD_ID}/members/${USER_ID}`).at(-1)!.body).toEqual({
      access_token: accessToken,
      roles: [ROLE_ID],
    });
    expect(roles()).toEqual([ROLE_ID]);
    expect((await call('GET', `/v1/subscribers/${subscriberId}`)).json).toMatchObject({
      platform_user_id: USER_ID,
      member_id: result.member.id,
    });
    expect(types(await newEvents())).toContain('member.joined');

    // The user's tokens are stored encrypted, never in clear.
    expect(await runtime.store.get(keys.credential(projectId, `discord_user#${subscriberId}`))).toMatchObject({
      secret_names: ['access_token', 'refresh_token'],
    });
    expect(JSON.stringify(await domainSnapshot(runtime.store))).not.toContain(accessToken);

    // Single use.
    await expect(
      completeDiscordLink(runtime, { projectId, portalSessionId: SESSION, subscriberId, code, state }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });

  it('from the portal: "Link your Discord account" goes to discord.com, and the callback links the member and shows the outcome', async () => {
    const subscriberId = await subscribed();
    const cookie = await portalCookie(subscriberId);
    const portal = await page(`/portal/${projectId}`, cookie);
    expect(portal.body).toContain('Link your Discord account');

    const start = await page(`/portal/${projectId}/discord/link`, cookie);
    expect(start.statusCode).toBe(303);
    const authorizeUrl = new URL(String(start.headers.Location));
    expect(`${authorizeUrl.origin}${authorizeUrl.pathname}`).toBe('https://discord.com/oauth2/authorize');
    const code = `code-${randomBytes(6).toString('hex')}`;
    discord.addCode(code, {
      clientId: APPLICATION_ID,
      redirectUri: redirectUri(),
      user: { id: USER_ID, username: 'ada' },
      accessToken: `user-access-${randomBytes(8).toString('hex')}`,
    });
    const state = authorizeUrl.searchParams.get('state')!;

    // Without the session that started it, the callback links nothing.
    expect((await page(`/portal/${projectId}/discord/callback?code=${code}&state=${state}`)).statusCode).toBe(401);
    const back = await page(`/portal/${projectId}/discord/callback?code=${code}&state=${state}`, cookie);
    expect(back.statusCode).toBe(303);
    expect(back.headers.Location).toBe(`/portal/${projectId}?discord=joined`);
    expect(roles()).toEqual([ROLE_ID]);
    const after = await page(String(back.headers.Location), cookie);
    expect(after.body).toContain('you were added to the server with your roles');
    expect(after.body).toContain('Link another Discord account');

    // Used once: the same callback again is refused on the page, and a denial at Discord changes nothing.
    expect((await page(`/portal/${projectId}/discord/callback?code=${code}&state=${state}`, cookie)).statusCode).toBe(
      422,
    );
    expect(
      (await page(`/portal/${projectId}/discord/callback?error=access_denied&state=${state}`, cookie)).statusCode,
    ).toBe(422);
  });

  it('refuses an expired state and a code Discord refuses', async () => {
    const subscriberId = await subscribed();
    const expired = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-a');
    clock.advance(11 * 60 * 1000);
    await expect(
      completeDiscordLink(runtime, {
        projectId,
        portalSessionId: SESSION,
        subscriberId,
        code: expired.code,
        state: expired.state,
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    const fresh = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-b');
    await expect(
      completeDiscordLink(runtime, {
        projectId,
        portalSessionId: SESSION,
        subscriberId,
        code: 'not-a-code',
        state: fresh.state,
      }),
    ).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    expect((await call('GET', `/v1/subscribers/${subscriberId}`)).json.platform_user_id).toBeNull();
  });

  it('adds the roles of a user already in the server, and linking another account replaces the old one (its roles removed)', async () => {
    const subscriberId = await subscribed();
    discord.guild(GUILD_ID).members.set(USER_ID, new Set());
    const first = await authorize(subscriberId, { id: USER_ID, username: 'ada' }, 'token-first');
    expect(
      (
        await completeDiscordLink(runtime, {
          projectId,
          portalSessionId: SESSION,
          subscriberId,
          code: first.code,
          state: first.state,
        })
      ).guild,
    ).toBe('already_in');
    expect(roles()).toEqual([ROLE_ID]);
    const oldMemberId = (await call('GET', `/v1/subscribers/${subscriberId}`)).json.member_id as string;

    const SECOND = '700000000000000002';
    const second = await authorize(subscriberId, { id: SECOND, username: 'ada2' }, 'token-second');
    const result = await completeDiscordLink(runtime, {
      projectId,
      portalSessionId: SESSION,
      subscriberId,
      code: second.code,
      state: second.state,
    });
    expect(result).toMatchObject({
      guild: 'joined',
      member: { platform_user_id: SECOND, subscriber_id: subscriberId },
    });
    expect(roles()).toEqual([]);
    expect([...discord.guild(GUILD_ID).members.get(SECOND)!]).toEqual([ROLE_ID]);
    expect((await call('GET', `/v1/subscribers/${subscriberId}`)).json).toMatchObject({
      platform_user_id: SECOND,
      member_id: result.member.id,
    });
    expect((await call('GET', `/v1/members/${oldMemberId}`)).json.subscriber_id).toBeNull();
  });
});
