import { randomBytes } from 'node:crypto';
import type { Principal } from '../../auth/principal.js';
import { CONNECTABLE_PLATFORM_TYPES, isConnectablePlatform } from '../../catalogues/platform-types.js';
import { isoTime } from '../../clock.js';
import { ConfigurationError, ENVIRONMENT_VARIABLES } from '../../config.js';
import {
  deleteCredential,
  deleteSubjectCredentials,
  openCredential,
  putCredential,
  sealCredential,
  type CredentialKind,
} from '../../credentials/repository.js';
import { ProblemError } from '../../errors.js';
import { TELEGRAM_HOOK_ROUTE, hookPath } from '../../hooks/routes.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import { logger } from '../../logger.js';
import { DISCORD_CREDENTIAL, DiscordCallError, discordSettingsOf, loadDiscordClient } from '../../platforms/discord.js';
import { DISCORD_USER_CREDENTIAL } from '../../platforms/discord-user.js';
import {
  TELEGRAM_CREDENTIAL,
  TelegramCallError,
  deleteTelegramWebhook,
  registerTelegramWebhook,
  type TelegramBotIdentity,
} from '../../platforms/telegram.js';
import { checkDiscordBot, requireBotFields } from './discord.js';
import type { Item } from '../../store/requests.js';
import type { Transaction, UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { archivedConflict, changeProject, type ChangeEvent } from './changes.js';
import { loadProject, toProject } from './repository.js';
import type { ConnectBotRequest, Project, ProjectBot } from './schema.js';

/**
 * A project's bot (DESIGN D16, D22): connecting it with its token and disconnecting it, which
 * talk to the platform (grammy; Discord's REST client) and store or delete the credential. Kept apart from
 * the other project modules, so only the two bot routes carry the platform clients in their bundles (DESIGN D23).
 */

/** The refusals of a bot connection: an archived project, or a platform whose bot cannot be connected now. */
function requireBotConnectable(project: Project): void {
  if (project.status === 'archived') throw archivedConflict(project, 'connecting or changing a bot');
  if (!isConnectablePlatform(project.platform_type)) {
    throw new ProblemError(
      'VALIDATION_FAILED',
      `A ${project.platform_type} project\u2019s bot cannot be connected yet; connectable platforms: ${CONNECTABLE_PLATFORM_TYPES.join(', ')}.`,
      {
        errors: [
          {
            path: 'token',
            message: `bots can be connected on ${CONNECTABLE_PLATFORM_TYPES.join(', ')} (service://enums/platform-type, connectable)`,
          },
        ],
      },
    );
  }
}

/**
 * The problem of a Telegram call that failed while connecting or disconnecting: a refused token is the caller's,
 * anything else the platform's.
 */
function telegramProblem(error: TelegramCallError): ProblemError {
  if (error.errorCode === 401 || error.errorCode === 404) {
    return new ProblemError(
      'VALIDATION_FAILED',
      'Telegram does not accept this bot token (revoked, or mistyped); get the current one from @BotFather.',
      {
        errors: [{ path: 'token', message: 'Telegram refused this token' }],
      },
    );
  }
  if (error.errorCode !== null && error.errorCode < 500 && error.errorCode !== 429) {
    return new ProblemError('VALIDATION_FAILED', error.message, {
      errors: [{ path: 'token', message: error.message }],
    });
  }
  return new ProblemError('PROVIDER_UNAVAILABLE', `${error.message} Nothing was changed; retry later.`);
}

/**
 * Connects a Telegram bot (D16, D22; Discord: {@link connectDiscordBot}, D28): `getMe`, `setWebhook` with a random
 * `secret_token`, credential sealed; events per {@link storeConnectedBot}. Errors: NOT_FOUND; CONFLICT (archived);
 * VALIDATION_FAILED (platform, fields, refused token); PROVIDER_UNAVAILABLE (nothing changed).
 */
export async function connectBot(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  projectId: string,
  input: ConnectBotRequest,
): Promise<Project> {
  const current = toProject(await loadProject(runtime.store, principal, projectId));
  requireBotConnectable(current);
  requireBotFields(current.platform_type, input);
  if (current.platform_type === 'discord') return connectDiscordBot(runtime, principal, projectId, input);
  const settings = integrationsOf(runtime);
  if (!settings.publicBaseUrl)
    throw new ConfigurationError(
      `Configuration of the service: ${ENVIRONMENT_VARIABLES.publicBaseUrl} is required to connect a bot (its inbound hook URL).`,
    );
  const webhookSecret = randomBytes(32).toString('base64url');
  let identity: TelegramBotIdentity;
  try {
    identity = await registerTelegramWebhook(
      settings,
      input.token,
      `${settings.publicBaseUrl}${hookPath(TELEGRAM_HOOK_ROUTE, projectId)}`,
      webhookSecret,
    );
  } catch (error) {
    if (error instanceof TelegramCallError) throw telegramProblem(error);
    throw error;
  }
  const botId = String(identity.id);
  const ref = { teamId: principal.teamId, projectId, kind: TELEGRAM_CREDENTIAL };
  const previous = await openCredential(
    runtime.store,
    settings.keyEncryptionKey,
    projectId,
    TELEGRAM_CREDENTIAL,
    principal.teamId,
  ).catch(() => null);
  const credential = await sealCredential(
    settings.keyEncryptionKey,
    ref,
    { bot_token: input.token, webhook_secret: webhookSecret },
    { platform_bot_id: botId },
    isoTime(runtime.clock.nowMs()),
  );
  const project = await storeConnectedBot(runtime, principal, projectId, credential, {
    id: botId,
    username: identity.username,
  });
  const previousToken = previous?.secrets.bot_token;
  if (previousToken && previous.description.public.platform_bot_id !== botId) {
    await deleteTelegramWebhook(settings, previousToken).catch((error) =>
      logger.warn('the replaced bot\u2019s webhook was not removed', {
        project_id: projectId,
        error: error instanceof Error ? error.message : 'unknown',
      }),
    );
  }
  return project;
}

/**
 * Connects a Discord project's bot (DESIGN D28): checks the token with `GET /users/@me`, registers the
 * `/membership` command, then stores token and client secret as the project's `discord_bot` credential
 * (application id and public key as its public fields) with the bot, as {@link connectBot} does for Telegram.
 */
async function connectDiscordBot(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  projectId: string,
  input: ConnectBotRequest,
): Promise<Project> {
  const settings = integrationsOf(runtime);
  const bot = await checkDiscordBot(settings, input);
  const ref = { teamId: principal.teamId, projectId, kind: DISCORD_CREDENTIAL };
  const credential = await sealCredential(
    settings.keyEncryptionKey,
    ref,
    bot.secrets,
    bot.publicFields,
    isoTime(runtime.clock.nowMs()),
  );
  return storeConnectedBot(runtime, principal, projectId, credential, bot.identity);
}

/**
 * Stores a checked bot's sealed `credential` and the bot in one transaction: `project.bot_connected` for a
 * new bot (`project.bot_disconnected` first when another bot is replaced); the same bot again stores the new
 * credential and emits `project.updated` only when its username changed.
 */
async function storeConnectedBot(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  credential: Item,
  identity: { id: string; username: string | null },
): Promise<Project> {
  const writes = (tx: Transaction) => putCredential(tx, credential);
  return changeProject(runtime, principal, projectId, (current, _item, nowIso) => {
    requireBotConnectable(current);
    const bot = current.bot;
    if (bot && bot.platform_bot_id === identity.id) {
      if (bot.username === identity.username) return { writes, result: (next) => next };
      const renamed: ProjectBot = { ...bot, username: identity.username };
      return {
        set: { bot: renamed },
        writes,
        events: [{ type: 'project.updated', data: (next) => ({ project: next }) }],
        result: (next) => next,
      };
    }
    const connected: ProjectBot = {
      platform_type: current.platform_type,
      platform_bot_id: identity.id,
      username: identity.username,
      permissions: [],
      connected_at: nowIso,
    };
    const events: ChangeEvent[] = bot
      ? [{ type: 'project.bot_disconnected', data: (next) => ({ project: next, bot }) }]
      : [];
    events.push({ type: 'project.bot_connected', data: (next) => ({ project: next, bot: connected }) });
    return { set: { bot: connected }, writes, events, result: (next) => next };
  });
}

/** The credential kind of a project's bot on `platform`. */
function botCredentialKind(platform: Project['platform_type']): CredentialKind {
  return platform === 'discord' ? DISCORD_CREDENTIAL : TELEGRAM_CREDENTIAL;
}

/**
 * Disconnects the bot: removes its Telegram webhook or Discord command (best effort), deletes credential and bot with
 * `project.bot_disconnected`, then Discord subscribers' OAuth2 tokens. Errors: NOT_FOUND; CONFLICT (no bot);
 * PROVIDER_UNAVAILABLE (Telegram unreachable; nothing changed).
 */
export async function disconnectBot(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  principal: Principal,
  projectId: string,
): Promise<Project> {
  const project = toProject(await loadProject(runtime.store, principal, projectId));
  const kind = botCredentialKind(project.platform_type);
  if (project.bot && project.platform_type === 'telegram') {
    const settings = integrationsOf(runtime);
    const credential = await openCredential(
      runtime.store,
      settings.keyEncryptionKey,
      projectId,
      TELEGRAM_CREDENTIAL,
      principal.teamId,
    ).catch(() => null);
    const token = credential?.secrets.bot_token;
    if (token) {
      try {
        await deleteTelegramWebhook(settings, token);
      } catch (error) {
        if (!(error instanceof TelegramCallError)) throw error;
        const problem = telegramProblem(error);
        if (problem.code === 'PROVIDER_UNAVAILABLE') throw problem;
      }
    }
  }
  if (project.bot && project.platform_type === 'discord')
    await deleteDiscordCommand(runtime, principal.teamId, projectId);
  const disconnected = await changeProject(runtime, principal, projectId, (current) => {
    const bot = current.bot;
    if (!bot)
      throw new ProblemError(
        'CONFLICT',
        `Project ${projectId} has no bot connected; connect one with PUT /v1/projects/${projectId}/bot.`,
      );
    return {
      set: { bot: null },
      writes: (tx) => deleteCredential(tx, projectId, kind),
      events: [{ type: 'project.bot_disconnected', data: (next) => ({ project: next, bot }) }],
      result: (next) => next,
    };
  });
  // The subscribers' Discord OAuth2 tokens were issued to the disconnected application: they go with it.
  if (project.platform_type === 'discord')
    await deleteSubjectCredentials(runtime.store, projectId, DISCORD_USER_CREDENTIAL);
  return disconnected;
}

/**
 * Deletes the slash commands (`/membership`, `/stop`, `/start`) of a Discord project's application (DESIGN D28), best
 * effort: a failure (Discord down, a token it no longer accepts) is logged — Discord's message, never a secret — and
 * does not stop the disconnect.
 */
async function deleteDiscordCommand(
  runtime: UnitOfWorkRuntime & IntegrationRuntime,
  teamId: string,
  projectId: string,
): Promise<void> {
  const settings = integrationsOf(runtime);
  try {
    const credential = await openCredential(
      runtime.store,
      settings.keyEncryptionKey,
      projectId,
      DISCORD_CREDENTIAL,
      teamId,
    );
    const token = credential?.secrets.bot_token;
    const applicationId = credential?.description.public.application_id;
    if (!token || !applicationId) return;
    const client = await loadDiscordClient();
    await client.deleteBotCommands(discordSettingsOf(settings), token, applicationId);
  } catch (error) {
    logger.warn('the Discord slash commands were not deleted', {
      project_id: projectId,
      reason: error instanceof DiscordCallError ? error.message : 'unexpected failure',
    });
  }
}
