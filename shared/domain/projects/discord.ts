import type { Principal } from '../../auth/principal.js';
import { openCredential } from '../../credentials/repository.js';
import { ProblemError } from '../../errors.js';
import { integrationsOf, type IntegrationRuntime, type IntegrationSettings } from '../../integrations.js';
import { DISCORD_CREDENTIAL, DiscordCallError, discordSettingsOf, loadDiscordClient } from '../../platforms/discord.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { linkResource } from './changes.js';
import { loadProject, toProject } from './repository.js';
import type { ConnectBotRequest, LinkResourceRequest, Project, ProjectResource } from './schema.js';

/**
 * A Discord project's bot and resources (DESIGN D28): checking a bot before it is stored, and a server or
 * role before it is linked. Calls Discord through `platforms/discord-client.ts` (loaded on first use); a
 * refusal is the caller's (VALIDATION_FAILED with Discord's message), anything else Discord's
 * (PROVIDER_UNAVAILABLE: nothing changed, retry later).
 */

/** What a checked Discord bot is stored as: its sealed secrets, public fields and identity. */
export interface CheckedDiscordBot {
  secrets: { bot_token: string; client_secret: string };
  publicFields: { platform_bot_id: string; application_id: string; public_key: string };
  identity: { id: string; username: string | null };
}

/**
 * The problem of a Discord call that failed while checking what a creator gave: refused (`path` names the field), or
 * Discord unavailable.
 */
function discordProblem(error: DiscordCallError, path: string, refusal?: string): ProblemError {
  if (error.status === null)
    return new ProblemError('PROVIDER_UNAVAILABLE', `${error.message} Nothing was changed; retry later.`);
  return new ProblemError('VALIDATION_FAILED', refusal ?? error.message, {
    errors: [{ path, message: error.message }],
  });
}

/** Runs a Discord check, turning its failure into the {@link discordProblem} of `path`. */
async function checked<T>(
  path: string,
  run: () => Promise<T>,
  refusal?: (error: DiscordCallError) => string | undefined,
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof DiscordCallError) throw discordProblem(error, path, refusal?.(error));
    throw error;
  }
}

/** The refusal of fields a platform does not take or needs, naming each. */
function fieldsProblem(detail: string, errors: { path: string; message: string }[]): ProblemError {
  return new ProblemError('VALIDATION_FAILED', detail, { errors });
}

/**
 * Checks that `input` fits a project on `platform`: `platform` (when given) is the project's; Discord needs
 * a Discord token, `application_id`, `public_key` and `client_secret`; Telegram a Telegram token and none
 * of those. Throws VALIDATION_FAILED naming the fields.
 */
export function requireBotFields(platform: Project['platform_type'], input: ConnectBotRequest): void {
  if (input.platform !== undefined && input.platform !== platform) {
    throw fieldsProblem(`This project runs on ${platform}; its bot is a ${platform} bot.`, [
      { path: 'platform', message: `must be ${platform} (the project\u2019s platform)` },
    ]);
  }
  const telegramToken = /^\d{1,20}:/.test(input.token);
  const discordOnly = (['application_id', 'public_key', 'client_secret'] as const).filter(
    (field) => input[field] !== undefined,
  );
  if (platform === 'discord') {
    const missing = (['application_id', 'public_key', 'client_secret'] as const).filter(
      (field) => input[field] === undefined,
    );
    const errors = [
      ...(telegramToken ? [{ path: 'token', message: 'expected a Discord bot token' }] : []),
      ...missing.map((path) => ({ path, message: 'required for a discord bot' })),
    ];
    if (errors.length > 0)
      throw fieldsProblem(
        'A Discord bot needs its token, application_id, public_key and client_secret (Developer Portal).',
        errors,
      );
    return;
  }
  const errors = [
    ...(telegramToken ? [] : [{ path: 'token', message: 'expected a Telegram bot token' }]),
    ...discordOnly.map((path) => ({ path, message: 'only for a discord bot' })),
  ];
  if (errors.length > 0) throw fieldsProblem('A Telegram bot takes its token from @BotFather only.', errors);
}

/**
 * Checks a Discord bot (DESIGN D28): its token with `GET /users/@me`, then registers the `/membership`
 * command (`PUT /applications/{application_id}/commands`). Returns what to store. Throws VALIDATION_FAILED
 * (Discord refused the token or the application) or PROVIDER_UNAVAILABLE.
 */
export async function checkDiscordBot(
  settings: IntegrationSettings,
  input: ConnectBotRequest,
): Promise<CheckedDiscordBot> {
  const client = await loadDiscordClient();
  const discord = discordSettingsOf(settings);
  const token = input.token;
  const applicationId = input.application_id!;
  const me = await checked(
    'token',
    () => client.currentUser(discord, token),
    (error) => `Discord refused this bot token: ${error.message}`,
  );
  await checked('application_id', () => client.registerCommands(discord, token, applicationId));
  return {
    secrets: { bot_token: token, client_secret: input.client_secret! },
    publicFields: {
      platform_bot_id: me.id,
      application_id: applicationId,
      public_key: input.public_key!.toLowerCase(),
    },
    identity: { id: me.id, username: me.username ?? null },
  };
}

/**
 * Checks a resource before a Discord project links it (DESIGN D28): a `server` must be a guild the bot is in
 * (`GET /guilds/{id}`) and the project's only one; a `role` must be a role of the linked server
 * (`GET /guilds/{guild}/roles`). Other kinds pass. Throws VALIDATION_FAILED (no bot, no server yet, a second
 * server, Discord refused, a role of another guild) or PROVIDER_UNAVAILABLE.
 */
async function checkDiscordResource(
  settings: IntegrationSettings,
  project: Project,
  botToken: string | undefined,
  input: LinkResourceRequest,
): Promise<void> {
  if (input.kind !== 'server' && input.kind !== 'role') return;
  const path = 'platform_resource_id';
  if (!botToken)
    throw fieldsProblem(`Connect the project\u2019s Discord bot first (PUT /v1/projects/${project.id}/bot).`, [
      { path, message: 'no Discord bot is connected' },
    ]);
  const client = await loadDiscordClient();
  const discord = discordSettingsOf(settings);
  const server = project.resources.find((resource) => resource.kind === 'server');
  if (input.kind === 'server') {
    if (server && server.platform_resource_id !== input.platform_resource_id) {
      throw fieldsProblem(
        `Project ${project.id} already links Discord server ${server.platform_resource_id}; a project links one server.`,
        [{ path, message: 'a project links one server' }],
      );
    }
    await checked(
      path,
      () => client.guild(discord, botToken, input.platform_resource_id),
      (error) => `The bot is not in Discord server ${input.platform_resource_id}: ${error.message}`,
    );
    return;
  }
  if (!server)
    throw fieldsProblem('Link the Discord server (kind server) before its roles.', [
      { path, message: 'no Discord server is linked' },
    ]);
  if (input.platform_resource_id === server.platform_resource_id)
    throw fieldsProblem(
      `Role ${input.platform_resource_id} is @everyone of Discord server ${server.platform_resource_id}: every member holds it, so it cannot stand for a membership. Link a role of its own.`,
      [{ path, message: '@everyone (the server id) cannot be a membership role' }],
    );
  const roles = await checked(path, () => client.guildRoles(discord, botToken, server.platform_resource_id));
  if (!roles.some((role) => role.id === input.platform_resource_id)) {
    throw fieldsProblem(
      `Role ${input.platform_resource_id} is not a role of the linked Discord server ${server.platform_resource_id}.`,
      [{ path, message: 'not a role of the linked server' }],
    );
  }
}

/**
 * Links a platform resource (`POST /v1/projects/{id}/resources`): a Discord project's server or role is
 * first checked with Discord ({@link checkDiscordResource}); then `linkResource` (its rules and event).
 */
export async function linkCheckedResource(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  projectId: string,
  input: LinkResourceRequest,
): Promise<ProjectResource> {
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  if (project.platform_type === 'discord' && project.status !== 'archived') {
    const settings = integrationsOf(runtime);
    const credential = await openCredential(
      runtime.store,
      settings.keyEncryptionKey,
      projectId,
      DISCORD_CREDENTIAL,
      principal.teamId,
    );
    await checkDiscordResource(settings, project, credential?.secrets.bot_token, input);
  }
  return linkResource(runtime, principal, projectId, input);
}
