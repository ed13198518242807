/**
 * Discord (DESIGN D28) with `@discordjs/rest` pointed at a loopback fake of the Discord API: connecting a bot
 * (GET /users/@me, the /membership command, the token and client secret stored encrypted and never
 * returned; refusals and outages change nothing), linking a server and its roles (checked with Discord),
 * access following the subscription through the plan's roles, ban / unban / kick, an outage recorded on the
 * member and reconciled by the deadline worker, and the interactions hook (Ed25519 signatures, PING,
 * /membership). Against DynamoDB Local; every event is checked against its published schema.
 */
import { generateKeyPairSync, randomBytes, randomUUID, sign, type KeyObject } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ManualClock } from '../../shared/clock.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { applyDueDeadlines } from '../../shared/deadlines/worker.js';
import { completeDiscordLink, discordAuthorizeUrl } from '../../shared/domain/members/discord-link.js';
import { createPortalLink } from '../../shared/domain/portal-sessions/links.js';
import { handlePublicRequest } from '../../shared/public-pages/router.js';
import { recordPlatformMembership } from '../../shared/domain/members/platform-updates.js';
import { PLATFORM_SYNC_FIRST_DELAY_MS } from '../../shared/domain/members/platform-retry.js';
import type { EventEnvelope } from '../../shared/events/outbox.js';
import { serveHookRequest } from '../../shared/hooks/dispatcher.js';
import type { IntegrationSettings } from '../../shared/integrations.js';
import { keys } from '../../shared/store/keys.js';
import { logger } from '../../shared/logger.js';
import { TOKEN_LIFETIME_SECONDS, startFakeDiscordApi, type FakeDiscordApi } from '../support/discord-api.js';
import { TeamEventCursor } from '../support/events.js';
import { domainSnapshot, expectRestProblem } from '../support/guarantees.js';
import { rest } from '../support/calls.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

const BOT = { id: '112233445566778899', username: 'club_bot' };
const APPLICATION_ID = '112233445566778899';
const GUILD_ID = '900000000000000001';
const OTHER_GUILD_ID = '900000000000000002';
const ROLE_ID = '800000000000000001';
const OTHER_ROLE_ID = '800000000000000002';
const FOREIGN_ROLE_ID = '800000000000000009';
const USER_ID = '700000000000000001';
const CLIENT_SECRET = 'client-secret-of-the-app';

let discord: FakeDiscordApi;
let clock: ManualClock;
let runtime: TestRuntime;
let team: Awaited<ReturnType<typeof seedTeam>>;
let projectId: string;
let botToken: string;
let eventCursor: TeamEventCursor;
let keyPair: { publicKey: KeyObject; privateKey: KeyObject };
let publicKeyHex: string;

beforeAll(async () => {
  discord = await startFakeDiscordApi();
  keyPair = generateKeyPairSync('ed25519');
  publicKeyHex = keyPair.publicKey.export({ format: 'der', type: 'spki' }).subarray(12).toString('hex');
});
afterAll(async () => {
  await discord.stop();
});

const newEvents = (): Promise<EventEnvelope[]> => eventCursor.next();
const types = (events: EventEnvelope[]) => events.map((event) => event.type);
const call = (method: string, path: string, body?: unknown, query?: Record<string, string>) =>
  rest(runtime, { method, path, token: team.token, body, query });

function settings(): IntegrationSettings {
  return {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: 'http://127.0.0.1:9',
    stripeApiBaseUrl: 'http://127.0.0.1:9',
    discordApiBaseUrl: discord.url,
    publicBaseUrl: 'https://members.example',
    retry: { retries: 2, minTimeoutMs: 0 },
  };
}

/** The roles Discord user USER_ID holds in the guild (the fake's state). */
const roles = () => [...(discord.guild(GUILD_ID).members.get(USER_ID) ?? [])];

const connectBody = () => ({
  platform: 'discord',
  token: botToken,
  application_id: APPLICATION_ID,
  public_key: publicKeyHex,
  client_secret: CLIENT_SECRET,
});

/** Connects the bot, links the guild and its role; returns nothing (events consumed). */
async function connectAndLink() {
  expect((await call('PUT', `/v1/projects/${projectId}/bot`, connectBody())).status).toBe(200);
  expect(
    (await call('POST', `/v1/projects/${projectId}/resources`, { kind: 'server', platform_resource_id: GUILD_ID }))
      .status,
  ).toBe(201);
  expect(
    (
      await call('POST', `/v1/projects/${projectId}/resources`, {
        kind: 'role',
        platform_resource_id: ROLE_ID,
        name: 'Members',
      })
    ).status,
  ).toBe(201);
  await newEvents();
}

/** Sends an interaction to the hook, signed with `key` (default the application's) as Discord does. */
async function interact(
  body: Record<string, unknown>,
  options: { key?: KeyObject; project?: string; tamper?: boolean } = {},
) {
  const text = JSON.stringify(body);
  const timestamp = String(Math.floor(clock.nowMs() / 1000));
  const signature = sign(null, Buffer.from(timestamp + text), options.key ?? keyPair.privateKey).toString('hex');
  const project = options.project ?? projectId;
  const result = await serveHookRequest(runtime, {
    version: '2.0',
    routeKey: '$default',
    rawPath: `/hooks/discord/${project}`,
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      'x-signature-ed25519': signature,
      'x-signature-timestamp': timestamp,
    },
    requestContext: {
      requestId: randomUUID(),
      http: {
        method: 'POST',
        path: `/hooks/discord/${project}`,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: 'test',
      },
    },
    body: options.tamper ? text.replace('}', ',"x":1}') : text,
    isBase64Encoded: false,
  } as never);
  return { status: result.statusCode, body: JSON.parse(result.body) as Record<string, unknown> };
}

beforeEach(async () => {
  clock = testClock();
  runtime = await createTestRuntime({ clock });
  runtime.integrations = settings();
  team = await seedTeam(runtime.store, clock);
  projectId = (await call('POST', '/v1/projects', { name: 'Guild', platform_type: 'discord' })).json.id;
  botToken = `${randomBytes(18).toString('base64url')}.GaBcDe.${randomBytes(27).toString('base64url')}`;
  discord.addBot(botToken, BOT);
  discord.addGuild(GUILD_ID, [ROLE_ID, OTHER_ROLE_ID]);
  discord.addGuild(OTHER_GUILD_ID, [FOREIGN_ROLE_ID]);
  eventCursor = new TeamEventCursor(runtime.store, team.team.id);
  await newEvents();
});

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
    expect(made[1].body).toEqual([expect.objectContaining({ name: 'membership', type: 1 })]);
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

  it('disconnects: the /membership command is deleted at Discord, the application\u2019s other commands kept', async () => {
    await connectAndLink();
    discord.commands(APPLICATION_ID).push({ id: '9100', name: 'other' });
    expect(discord.commands(APPLICATION_ID).map((command) => command.name)).toEqual(['membership', 'other']);
    const since = discord.calls.length;
    expect((await call('DELETE', `/v1/projects/${projectId}/bot`)).status).toBe(200);
    expect(discord.commands(APPLICATION_ID).map((command) => command.name)).toEqual(['other']);
    const made = discord.calls.slice(since);
    expect(made.map((entry) => entry.route)).toEqual([
      `GET /applications/${APPLICATION_ID}/commands`,
      `DELETE /applications/${APPLICATION_ID}/commands/9000`,
    ]);
    expect(made.map((entry) => entry.authorization)).toEqual([`Bot ${botToken}`, `Bot ${botToken}`]);
  });

  it('disconnects even when Discord cannot delete the command, logging it without secrets', async () => {
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
      expect(warn).toHaveBeenCalledWith('the Discord /membership command was not deleted', {
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

describe('access through the adapter', () => {
  /** Connects and links, creates a plan and a subscriber linked to Discord user USER_ID (a member, in the guild). */
  async function setUp() {
    await connectAndLink();
    const plan = (
      await call('POST', `/v1/projects/${projectId}/plans`, {
        name: 'Monthly',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
      })
    ).json;
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
    return { planId: plan.id as string, subscriberId: subscriber.id as string, memberId };
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

  it('answers PING with PONG and /membership ephemerally, for a known and an unknown Discord user', async () => {
    await connectAndLink();
    expect(await interact({ type: 1 })).toEqual({ status: 200, body: { type: 1 } });

    const plan = (
      await call('POST', `/v1/projects/${projectId}/plans`, {
        name: 'Monthly',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
      })
    ).json;
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

describe('linking a Discord account (OAuth2)', () => {
  const SESSION = 'portal-session-1';
  const REDIRECT = `https://members.example/portal/${'{project}'}/discord/callback`;
  const redirectUri = () => REDIRECT.replace('{project}', projectId);

  /** A GET of the public pages with the portal session's cookie. */
  const page = (path: string, cookie?: string) => {
    const [rawPath, rawQueryString = ''] = path.split('?');
    return handlePublicRequest(runtime, {
      version: '2.0',
      routeKey: 'ANY /portal/{proxy+}',
      rawPath,
      rawQueryString,
      cookies: cookie ? [cookie] : undefined,
      headers: { host: 'members.example', 'x-forwarded-proto': 'https' },
      requestContext: { http: { method: 'GET', path: rawPath, sourceIp: '10.9.8.7' }, requestId: randomUUID() },
      isBase64Encoded: false,
    } as never);
  };
  /** Signs the subscriber in to the portal; returns the session cookie. */
  async function portalCookie(subscriberId: string): Promise<string> {
    const signedIn = await page((await createPortalLink(runtime, team.team.id, projectId, subscriberId)).path);
    expect(signedIn.statusCode).toBe(303);
    return signedIn.cookies![0].split(';')[0];
  }

  /** Connects and links, and creates a subscriber with an active subscription; returns the subscriber id. */
  async function subscribed(): Promise<string> {
    return (await subscribedWithPlan()).subscriberId;
  }
  /** {@link subscribed}, with the plan and the subscription. */
  async function subscribedWithPlan(): Promise<{ subscriberId: string; planId: string; subscriptionId: string }> {
    await connectAndLink();
    const plan = (
      await call('POST', `/v1/projects/${projectId}/plans`, {
        name: 'Monthly',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
      })
    ).json;
    const subscriber = (await call('POST', `/v1/projects/${projectId}/subscribers`, { display_name: 'Ada' })).json;
    const subscription = await call('POST', `/v1/projects/${projectId}/subscriptions`, {
      subscriber_id: subscriber.id,
      plan_id: plan.id,
    });
    expect(subscription.status).toBe(201);
    await newEvents();
    return {
      subscriberId: subscriber.id as string,
      planId: plan.id as string,
      subscriptionId: subscription.json.id as string,
    };
  }
  /** Starts linking and answers the authorization as Discord would for `user`; returns the code and state. */
  async function authorize(subscriberId: string, user: { id: string; username: string }, accessToken: string) {
    const { url } = await discordAuthorizeUrl(runtime, {
      teamId: team.team.id,
      projectId,
      portalSessionId: SESSION,
      subscriberId,
    });
    const parsed = new URL(url);
    const code = `code-${randomBytes(6).toString('hex')}`;
    discord.addCode(code, { clientId: APPLICATION_ID, redirectUri: redirectUri(), user, accessToken });
    return { url: parsed, code, state: parsed.searchParams.get('state')! };
  }

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
    clock.advance(24 * 3600 * 1000);
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
    clock.advance(8 * 24 * 3600 * 1000);
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
    clock.advance(8 * 24 * 3600 * 1000);
    const current = (
      await call('GET', `/v1/projects/${projectId}/subscriptions`, undefined, { subscriber_id: subscriberId })
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
    clock.advance(8 * 24 * 3600 * 1000);
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
