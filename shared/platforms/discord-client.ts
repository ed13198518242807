import {
  DiscordAPIError,
  HTTPError,
  REST,
  RateLimitError,
  makeURLSearchParams,
  type RESTOptions,
} from '@discordjs/rest';
import {
  ApplicationCommandType,
  Routes,
  type RESTGetAPIApplicationCommandsResult,
  type RESTGetAPICurrentUserResult,
  type RESTGetAPIGuildMembersResult,
  type RESTGetAPIGuildResult,
  type RESTGetAPIGuildRolesResult,
  type RESTPostOAuth2AccessTokenResult,
} from 'discord-api-types/v10';
import { DiscordCallError, type DiscordSettings } from './discord.js';

/**
 * The Discord REST calls of the service (DESIGN D28) through `@discordjs/rest` (its rate-limit queue,
 * `retry_after` waits and 5xx retries) with the `discord-api-types` routes. Imported on first use by
 * `discord.ts`, so esbuild puts the client in a chunk of its own (DESIGN D23 bundle budgets). Every
 * failure becomes a {@link DiscordCallError} naming the call and Discord's message — never a token.
 */

/**
 * The slash commands registered when a bot is connected: `/membership` (status and a portal link), `/stop` (only the
 * essential notices from now on) and `/start` (every notice again; DESIGN D32).
 */
export const BOT_COMMANDS = [
  { name: 'membership', description: 'Your membership status and a link to manage it' },
  { name: 'stop', description: 'Get only the essential notices about your membership' },
  { name: 'start', description: 'Get every notice about your membership again' },
].map((command) => ({ ...command, type: ApplicationCommandType.ChatInput }));

/** A REST client at the settings' API with `token` (`Bot` or, for a user's OAuth2 token, `Bearer`). */
function client(settings: DiscordSettings, token: string | null, authPrefix: 'Bot' | 'Bearer' = 'Bot'): REST {
  const rest = new REST({
    api: settings.apiBaseUrl,
    authPrefix,
    retries: settings.retries,
    timeout: settings.timeoutMs,
    offset: settings.rateLimitOffsetMs,
    // Node's own fetch, as in the client's web build that Lambda bundles carry (lib/function-code.ts), so tests take
    // the same path; the client documents `makeRequest: fetch`, but types it with undici's fetch types, not Node's.
    makeRequest: fetch as unknown as RESTOptions['makeRequest'],
    // One client per call: no sweeper timers to keep a process alive.
    handlerSweepInterval: 0,
    hashSweepInterval: 0,
  });
  if (token !== null) rest.setToken(token);
  return rest;
}

/** Runs one call (`method` names it in errors), turning every failure into a {@link DiscordCallError}. */
async function callDiscord<T>(method: string, call: () => Promise<unknown>): Promise<T> {
  try {
    return (await call()) as T;
  } catch (error) {
    if (error instanceof DiscordAPIError) {
      if (error.status === 429 || error.status >= 500)
        throw new DiscordCallError(`Discord could not serve ${method} (${error.status}).`, null);
      throw new DiscordCallError(`Discord refused ${method}: ${error.message} (${error.status}).`, error.status);
    }
    if (error instanceof HTTPError)
      throw new DiscordCallError(`Discord could not serve ${method} (${error.status}).`, null);
    if (error instanceof RateLimitError) throw new DiscordCallError(`Discord rate-limited ${method}.`, null);
    throw new DiscordCallError(`Discord could not be reached for ${method}.`, null);
  }
}

/** The account behind a bot or user token (`GET /users/@me`). */
export async function currentUser(
  settings: DiscordSettings,
  token: string,
  authPrefix: 'Bot' | 'Bearer' = 'Bot',
): Promise<RESTGetAPICurrentUserResult> {
  return callDiscord('GET /users/@me', () => client(settings, token, authPrefix).get(Routes.user()));
}

/**
 * Registers the application's global commands (`PUT /applications/{id}/commands`, a bulk overwrite): the
 * {@link BOT_COMMANDS}.
 */
export async function registerCommands(settings: DiscordSettings, token: string, applicationId: string): Promise<void> {
  await callDiscord('PUT /applications/{id}/commands', () =>
    client(settings, token).put(Routes.applicationCommands(applicationId), { body: BOT_COMMANDS }),
  );
}

/**
 * Deletes the application's global commands named as {@link BOT_COMMANDS} (`GET /applications/{id}/commands`, then
 * `DELETE /applications/{id}/commands/{command}` each), leaving the application's other commands alone. Answers how
 * many were deleted.
 */
export async function deleteBotCommands(
  settings: DiscordSettings,
  token: string,
  applicationId: string,
): Promise<number> {
  const rest = client(settings, token);
  const commands = await callDiscord<RESTGetAPIApplicationCommandsResult>('GET /applications/{id}/commands', () =>
    rest.get(Routes.applicationCommands(applicationId)),
  );
  const ours = new Set(BOT_COMMANDS.map((command) => command.name));
  const deleted = commands.filter((candidate) => ours.has(candidate.name));
  for (const command of deleted)
    await callDiscord('DELETE /applications/{id}/commands/{command}', () =>
      rest.delete(Routes.applicationCommand(applicationId, command.id)),
    );
  return deleted.length;
}

/** A guild the bot is in (`GET /guilds/{id}`); Discord answers 403/404 when it is not. */
export async function guild(settings: DiscordSettings, token: string, guildId: string): Promise<RESTGetAPIGuildResult> {
  return callDiscord('GET /guilds/{id}', () => client(settings, token).get(Routes.guild(guildId)));
}

/** A guild's roles (`GET /guilds/{id}/roles`). */
export async function guildRoles(
  settings: DiscordSettings,
  token: string,
  guildId: string,
): Promise<RESTGetAPIGuildRolesResult> {
  return callDiscord('GET /guilds/{id}/roles', () => client(settings, token).get(Routes.guildRoles(guildId)));
}

/**
 * Whether a user is a member of a guild (`GET /guilds/{guild}/members/{user}`; Discord's 404 Unknown Member: false).
 */
export async function isGuildMember(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  userId: string,
): Promise<boolean> {
  try {
    await callDiscord('GET /guilds/{guild}/members/{user}', () =>
      client(settings, token).get(Routes.guildMember(guildId, userId)),
    );
    return true;
  } catch (error) {
    if (error instanceof DiscordCallError && error.status === 404) return false;
    throw error;
  }
}

/** Guild members read per page (Discord's maximum). */
export const GUILD_MEMBERS_PAGE_SIZE = 1000;

/**
 * One page of a guild's members in user id order after user `after` (`GET /guilds/{guild}/members?limit=&after=`, the
 * bot needs the server members intent): each member's user id and role ids.
 */
export async function listGuildMembers(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  after: string | null,
): Promise<{ userId: string; roleIds: string[] }[]> {
  const query = makeURLSearchParams({ limit: GUILD_MEMBERS_PAGE_SIZE, ...(after ? { after } : {}) });
  const members = await callDiscord<RESTGetAPIGuildMembersResult>('GET /guilds/{guild}/members', () =>
    client(settings, token).get(Routes.guildMembers(guildId), { query }),
  );
  return members.flatMap((member) => (member.user ? [{ userId: member.user.id, roleIds: member.roles }] : []));
}

/** Gives a guild member a role (`PUT /guilds/{guild}/members/{user}/roles/{role}`). */
export async function addMemberRole(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  userId: string,
  roleId: string,
): Promise<void> {
  await callDiscord('PUT /guilds/{guild}/members/{user}/roles/{role}', () =>
    client(settings, token).put(Routes.guildMemberRole(guildId, userId, roleId)),
  );
}

/** Takes a role from a guild member (`DELETE /guilds/{guild}/members/{user}/roles/{role}`). */
export async function removeMemberRole(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  userId: string,
  roleId: string,
): Promise<void> {
  await callDiscord('DELETE /guilds/{guild}/members/{user}/roles/{role}', () =>
    client(settings, token).delete(Routes.guildMemberRole(guildId, userId, roleId)),
  );
}

/** Removes a member from a guild (`DELETE /guilds/{guild}/members/{user}`: a kick). */
export async function removeMember(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  userId: string,
): Promise<void> {
  await callDiscord('DELETE /guilds/{guild}/members/{user}', () =>
    client(settings, token).delete(Routes.guildMember(guildId, userId)),
  );
}

/** Bans a user from a guild (`PUT /guilds/{guild}/bans/{user}`), with an audit-log reason if given. */
export async function banMember(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  userId: string,
  reason: string | null,
): Promise<void> {
  await callDiscord('PUT /guilds/{guild}/bans/{user}', () =>
    client(settings, token).put(Routes.guildBan(guildId, userId), { body: {}, ...(reason ? { reason } : {}) }),
  );
}

/** Lifts a user's ban (`DELETE /guilds/{guild}/bans/{user}`). */
export async function unbanMember(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  userId: string,
): Promise<void> {
  await callDiscord('DELETE /guilds/{guild}/bans/{user}', () =>
    client(settings, token).delete(Routes.guildBan(guildId, userId)),
  );
}

/**
 * Adds a user to a guild with `roles` using their OAuth2 access token (`PUT /guilds/{guild}/members/{user}`,
 * scope `guilds.join`). Answers true when they joined now, false when they were already in (Discord: 204,
 * and the roles are then not applied).
 */
export async function addGuildMember(
  settings: DiscordSettings,
  token: string,
  guildId: string,
  userId: string,
  accessToken: string,
  roles: string[],
): Promise<boolean> {
  const joined = await callDiscord<unknown>('PUT /guilds/{guild}/members/{user}', () =>
    client(settings, token).put(Routes.guildMember(guildId, userId), { body: { access_token: accessToken, roles } }),
  );
  return joined !== undefined && joined !== null && typeof joined === 'object' && Object.keys(joined).length > 0;
}

/**
 * Exchanges an OAuth2 authorization code for the user's tokens (`POST {api}/oauth2/token`, form-encoded, client
 * credentials in the body).
 */
export async function exchangeCode(
  settings: DiscordSettings,
  input: { clientId: string; clientSecret: string; code: string; redirectUri: string },
): Promise<RESTPostOAuth2AccessTokenResult> {
  return tokenRequest(settings, {
    grant_type: 'authorization_code',
    code: input.code,
    redirect_uri: input.redirectUri,
    client_id: input.clientId,
    client_secret: input.clientSecret,
  });
}

/**
 * Refreshes a user's OAuth2 tokens (`POST {api}/oauth2/token`, `grant_type=refresh_token`): new access and
 * refresh tokens (the old refresh token stops working). A refusal (400 `invalid_grant`: revoked or
 * already used) is a {@link DiscordCallError} with its status.
 */
export async function refreshTokens(
  settings: DiscordSettings,
  input: { clientId: string; clientSecret: string; refreshToken: string },
): Promise<RESTPostOAuth2AccessTokenResult> {
  return tokenRequest(settings, {
    grant_type: 'refresh_token',
    refresh_token: input.refreshToken,
    client_id: input.clientId,
    client_secret: input.clientSecret,
  });
}

/** A request to the OAuth2 token endpoint with `form` (form-encoded, no authorization header, unversioned). */
async function tokenRequest(
  settings: DiscordSettings,
  form: Record<string, string>,
): Promise<RESTPostOAuth2AccessTokenResult> {
  const body = makeURLSearchParams(form);
  return callDiscord('POST /oauth2/token', () =>
    client(settings, null).post(Routes.oauth2TokenExchange(), {
      body,
      passThroughBody: true,
      auth: false,
      versioned: false,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    }),
  );
}

/**
 * Sends `content` to a user's DMs (`POST /users/@me/channels` for the DM channel, then `POST /channels/{id}/messages`,
 * no mentions parsed). Throws `DiscordCallError` (403 when the user does not take DMs from the bot).
 */
export async function sendDirectMessage(
  settings: DiscordSettings,
  token: string,
  userId: string,
  content: string,
): Promise<void> {
  const rest = client(settings, token);
  const channel = await callDiscord<{ id: string }>('POST /users/@me/channels', () =>
    rest.post(Routes.userChannels(), { body: { recipient_id: userId } }),
  );
  await callDiscord('POST /channels/{id}/messages', () =>
    rest.post(Routes.channelMessages(channel.id), { body: { content, allowed_mentions: { parse: [] } } }),
  );
}
