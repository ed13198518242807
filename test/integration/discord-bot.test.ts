/**
 * Discord (DESIGN D28) with `@discordjs/rest` pointed at a loopback fake of the Discord API: connecting a bot
 * (GET /users/@me, the /membership command, the token and client secret stored encrypted and never
 * returned; refusals and outages change nothing), linking a server and its roles (checked with Discord),
 * access following the subscription through the plan's roles, ban / unban / kick, an outage recorded on the
 * member and reconciled by the deadline worker, and the interactions hook (Ed25519 signatures, PING,
 * /membership). Against DynamoDB Local; every event is checked against its published schema.
 */

import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { keys } from '../../shared/store/keys.js';
import { logger } from '../../shared/logger.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import {
  APPLICATION_ID,
  BOT,
  CLIENT_SECRET,
  FOREIGN_ROLE_ID,
  GUILD_ID,
  OTHER_GUILD_ID,
  OTHER_ROLE_ID,
  ROLE_ID,
  USER_ID,
  botToken,
  call,
  clock,
  connectAndLink,
  connectBody,
  discord,
  interact,
  newEvents,
  projectId,
  publicKeyHex,
  runtime,
  types,
  useDiscordFixture,
} from '../support/fixtures/discord.js';
import { createMonthlyPlan } from '../support/monthly-plan.js';

useDiscordFixture();

describe('connecting a Discord bot', () => {
  it('checks the token with GET /users/@me, registers /membership, stores the token and client secret encrypted and never returns them', async () => {
    const since = discord.calls.length;
    const reply = await call('PUT', `/v1/projects/${projectId}/bot`, connectBody());
    expect(reply.status).toBe(200);
    expect(reply.json.bot).toEqual({
      platform_type: 'discord',
      platform_bot_id: BOT.id,
      username: BOT.username,
      permissions: [],
      connected_at: expect.any(String),
    });
    const made = discord.calls.slice(since);
    expect(made.map((entry) => entry.route)).toEqual([
      'GET /users/@me',
      `PUT /applications/${APPLICATION_ID}/commands`,
    ]);
    expect(made[1].body).toEqual(
      ['membership', 'stop', 'start'].map((name) => expect.objectContaining({ name, type: 1 })),
    );
    expect(made.every((entry) => entry.authorization === `Bot ${botToken}`)).toBe(true);
    const credential = await runtime.store.get(keys.credential(projectId, 'discord_bot'));
    expect(credential).toMatchObject({
      public: { platform_bot_id: BOT.id, application_id: APPLICATION_ID, public_key: publicKeyHex },
      secret_names: ['bot_token', 'client_secret'],
    });
    const events = await newEvents();
    expect(types(events)).toEqual(['project.bot_connected']);
    const everything =
      JSON.stringify(await domainSnapshot(runtime.store)) +
      JSON.stringify(events) +
      reply.text +
      (await call('GET', `/v1/projects/${projectId}`)).text;
    expect(everything).not.toContain(botToken);
    expect(everything).not.toContain(CLIENT_SECRET);
    expect(JSON.stringify(credential)).not.toContain(botToken);
  });

  it('answers 422 with Discord’s message for a refused token, 502 when Discord is down, and 422 for missing fields, storing nothing', async () => {
    const before = await domainSnapshot(runtime.store);
    const refused = expectRestProblem(
      await call('PUT', `/v1/projects/${projectId}/bot`, {
        ...connectBody(),
        token: `${'x'.repeat(24)}.GaBcDe.${'y'.repeat(27)}`,
      }),
      'VALIDATION_FAILED',
    );
    expect(refused.detail).toContain('401: Unauthorized');
    expect(refused.errors).toEqual([
      { path: 'token', message: expect.stringContaining('Discord refused GET /users/@me') },
    ]);

    discord.failNext('GET /users/@me', { status: 503, message: 'Service Unavailable', times: 3 });
    expectRestProblem(await call('PUT', `/v1/projects/${projectId}/bot`, connectBody()), 'PROVIDER_UNAVAILABLE');

    const missing = expectRestProblem(
      await call('PUT', `/v1/projects/${projectId}/bot`, { token: botToken }),
      'VALIDATION_FAILED',
    );
    expect(missing.errors!.map((error: { path: string }) => error.path)).toEqual([
      'application_id',
      'public_key',
      'client_secret',
    ]);
    expectRestProblem(
      await call('PUT', `/v1/projects/${projectId}/bot`, { ...connectBody(), token: `42:${'a'.repeat(30)}` }),
      'VALIDATION_FAILED',
    );
    expectRestProblem(
      await call('PUT', `/v1/projects/${projectId}/bot`, { ...connectBody(), platform: 'telegram' }),
      'VALIDATION_FAILED',
    );

    expect(await newEvents()).toEqual([]);
    expect(await domainSnapshot(runtime.store)).toEqual(before);
    expect(await runtime.store.get(keys.credential(projectId, 'discord_bot'))).toBeUndefined();
  });

  it('disconnects: the bot\u2019s slash commands are deleted at Discord, the application\u2019s other commands kept', async () => {
    await connectAndLink();
    discord.commands(APPLICATION_ID).push({ id: '9100', name: 'other' });
    expect(discord.commands(APPLICATION_ID).map((command) => command.name)).toEqual([
      'membership',
      'stop',
      'start',
      'other',
    ]);
    const since = discord.calls.length;
    expect((await call('DELETE', `/v1/projects/${projectId}/bot`)).status).toBe(200);
    expect(discord.commands(APPLICATION_ID).map((command) => command.name)).toEqual(['other']);
    const made = discord.calls.slice(since);
    expect(made.map((entry) => entry.route)).toEqual([
      `GET /applications/${APPLICATION_ID}/commands`,
      `DELETE /applications/${APPLICATION_ID}/commands/9000`,
      `DELETE /applications/${APPLICATION_ID}/commands/9001`,
      `DELETE /applications/${APPLICATION_ID}/commands/9002`,
    ]);
    expect(made.every((entry) => entry.authorization === `Bot ${botToken}`)).toBe(true);
  });

  it('disconnects even when Discord cannot delete the commands, logging it without secrets', async () => {
    await connectAndLink();
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    try {
      discord.failNext(`GET /applications/${APPLICATION_ID}/commands`, {
        status: 503,
        message: 'Service Unavailable',
        times: 3,
      });
      const reply = await call('DELETE', `/v1/projects/${projectId}/bot`);
      expect(reply.status).toBe(200);
      expect(reply.json.bot).toBeNull();
      expect(await runtime.store.get(keys.credential(projectId, 'discord_bot'))).toBeUndefined();
      expect(warn).toHaveBeenCalledWith('the Discord slash commands were not deleted', {
        project_id: projectId,
        reason: expect.stringContaining('(503)'),
      });
      expect(JSON.stringify(warn.mock.calls)).not.toContain(botToken);
      expect(JSON.stringify(warn.mock.calls)).not.toContain(CLIENT_SECRET);
    } finally {
      warn.mockRestore();
    }
  });

  it('disconnects: the stored credential is deleted and the interactions hook refuses afterwards', async () => {
    await connectAndLink();
    expect((await interact({ type: 1 })).status).toBe(200);
    const reply = await call('DELETE', `/v1/projects/${projectId}/bot`);
    expect(reply.status).toBe(200);
    expect(reply.json.bot).toBeNull();
    expect(types(await newEvents())).toEqual(['project.bot_disconnected']);
    expect(await runtime.store.get(keys.credential(projectId, 'discord_bot'))).toBeUndefined();
    expect((await interact({ type: 1 })).status).toBe(401);
  });
});

describe('linking a server and its roles', () => {
  it('needs the bot in the server, one server per project, and roles of the linked server', async () => {
    const link = (kind: string, id: string) =>
      call('POST', `/v1/projects/${projectId}/resources`, { kind, platform_resource_id: id });
    expectRestProblem(await link('server', GUILD_ID), 'VALIDATION_FAILED'); // no bot yet
    expect((await call('PUT', `/v1/projects/${projectId}/bot`, connectBody())).status).toBe(200);
    expectRestProblem(await link('role', ROLE_ID), 'VALIDATION_FAILED'); // no server yet
    const unknown = expectRestProblem(await link('server', '900000000000000099'), 'VALIDATION_FAILED');
    expect(unknown.detail).toContain('Unknown Guild');
    expect((await link('server', GUILD_ID)).status).toBe(201);
    expectRestProblem(await link('server', OTHER_GUILD_ID), 'VALIDATION_FAILED');
    const foreign = expectRestProblem(await link('role', FOREIGN_ROLE_ID), 'VALIDATION_FAILED');
    expect(foreign.detail).toContain(`not a role of the linked Discord server ${GUILD_ID}`);
    expect((await link('role', ROLE_ID)).status).toBe(201);
    expect(discord.callsOf(`GET /guilds/${GUILD_ID}`).length).toBeGreaterThan(0);

    discord.failNext(`GET /guilds/${GUILD_ID}/roles`, { status: 502, message: 'Bad Gateway', times: 3 });
    expectRestProblem(await link('role', OTHER_ROLE_ID), 'PROVIDER_UNAVAILABLE');
    expect(types(await newEvents())).toEqual([
      'project.bot_connected',
      'project.resource_linked',
      'project.resource_linked',
    ]);
  });
});

describe('the interactions hook', () => {
  it('refuses a bad signature, another key, an unknown project and a project without a Discord bot with the same 401', async () => {
    await connectAndLink();
    const other = generateKeyPairSync('ed25519').privateKey;
    const telegramProject = (await call('POST', '/v1/projects', { name: 'Readers', platform_type: 'telegram' })).json
      .id as string;
    const answers = [
      await interact({ type: 1 }, { tamper: true }),
      await interact({ type: 1 }, { key: other }),
      await interact({ type: 1 }, { project: randomUUID() }),
      await interact({ type: 1 }, { project: telegramProject }),
      await interact({ type: 1 }, { project: 'not-a-uuid' }),
    ];
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401]);
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
  });

  it('refuses an interaction signed more than 5 minutes from now, and one whose id was answered already (401)', async () => {
    await connectAndLink();
    const minute = 60_000;
    const command = (id: string) => ({
      id,
      type: 2,
      data: { name: 'membership', type: 1 },
      member: { user: { id: '700000000000000998', username: 'someone' } },
      guild_id: GUILD_ID,
    });
    const refused = await interact(command('1'), { key: generateKeyPairSync('ed25519').privateKey });
    expect(refused.status).toBe(401);
    const stale = await interact(command('2'), { signedAtMs: clock.nowMs() - 5 * minute - 1000 });
    const ahead = await interact(command('3'), { signedAtMs: clock.nowMs() + 5 * minute + 1000 });
    expect([stale, ahead]).toEqual([refused, refused]);
    expect((await interact(command('4'), { signedAtMs: clock.nowMs() - 4 * minute })).status).toBe(200);
    expect(await interact(command('4'))).toEqual(refused);
    expect((await interact(command('5'))).status).toBe(200);
  });

  it('answers PING with PONG and /membership ephemerally, for a known and an unknown Discord user', async () => {
    await connectAndLink();
    expect(await interact({ type: 1 })).toEqual({ status: 200, body: { type: 1 } });

    const plan = await createMonthlyPlan(call, projectId);
    const subscriber = (
      await call('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'Ada', platform_user_id: USER_ID })
    ).json;
    discord.guild(GUILD_ID).members.set(USER_ID, new Set());
    await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriber.id, plan_id: plan.id });
    const command = (userId: string) => ({
      type: 2,
      data: { name: 'membership', type: 1 },
      member: { user: { id: userId, username: 'someone' } },
      guild_id: GUILD_ID,
    });

    const known = await interact(command(USER_ID));
    expect(known).toEqual({
      status: 200,
      body: { type: 4, data: { content: expect.stringContaining('Your membership is active.'), flags: 64 } },
    });
    const content = (known.body.data as { content: string }).content;
    expect(content).toMatch(
      new RegExp(`https://members\\.example/portal/${projectId}/sign-in\\?token=ppl_[A-Za-z0-9_-]+`),
    );
    // A fresh link each time.
    expect((await interact(command(USER_ID))).body.data).not.toEqual(known.body.data);
    const unknown = await interact(command('700000000000000999'));
    expect(unknown).toEqual({
      status: 200,
      body: {
        type: 4,
        data: { content: 'No membership found for your Discord account in this community.', flags: 64 },
      },
    });
  });
});
