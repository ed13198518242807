// grammy's web build: the same Api on Node's own fetch (its Node build bundles node-fetch, ~400 KB per Lambda),
// imported on first use (see loadGrammy).
import type { Api } from 'grammy/web';
import pRetry, { AbortError } from 'p-retry';
import { isoTime } from '../clock.js';
import { openCredential, type CredentialKind } from '../credentials/repository.js';
import type { IntegrationSettings } from '../integrations.js';
import { logger } from '../logger.js';
import { retryOptions } from '../retry.js';
import { keys } from '../store/keys.js';
import type { Store } from '../store/store.js';
import {
  parseProjectResources,
  type PlatformAdapter,
  type PlatformPresenceResult,
  type PlatformGrantResult,
  type PlatformProjectTarget,
  type PlatformResult,
  type PlatformTarget,
} from './platform-adapter.js';

/**
 * The Telegram platform (DESIGN D22) through `grammy`'s `Api` at `TELEGRAM_API_ROOT`; the bot's credential
 * (`telegram_bot`, D16) is opened only for a call. Retries network, 429 and 5xx, not 4xx. Failures name the method and
 * Telegram's description, never the token (grammy's `HttpError` text may hold the token-bearing URL, so it is never
 * used).
 */

/** The credential kind of a Telegram bot: secrets `bot_token` and `webhook_secret`. */
export const TELEGRAM_CREDENTIAL: CredentialKind = 'telegram_bot';

/**
 * The updates the service asks Telegram for (`setWebhook` `allowed_updates`): membership changes, and messages (the
 * `/account` command, D27).
 */
const TELEGRAM_ALLOWED_UPDATES = ['chat_member', 'my_chat_member', 'message'] as const;

/** How long a personal invite link works, in seconds (7 days). */
const INVITE_LINK_LIFETIME_SECONDS = 7 * 24 * 3600;

/** A Telegram Bot API call failed for good (after retries); `message` is safe to show (no token). */
export class TelegramCallError extends Error {
  /** Telegram's `error_code` (e.g. 400, 401, 403), or null when Telegram could not be reached. */
  readonly errorCode: number | null;
  constructor(message: string, errorCode: number | null) {
    super(message);
    this.name = 'TelegramCallError';
    this.errorCode = errorCode;
  }
}

/** grammy's web module, once imported. */
let grammy: Promise<typeof import('grammy/web')> | undefined;

/**
 * grammy's web module, imported on first use: esbuild puts it in a chunk of its own (as the Stripe SDK,
 * `providers/stripe-client.ts`), so a route bundle that can reach Telegram carries it only when a call is
 * made (DESIGN D23's bundle budgets). Every later call gets the same module.
 */
function loadGrammy(): Promise<typeof import('grammy/web')> {
  grammy ??= import('grammy/web');
  return grammy;
}

/** A grammy `Api` for `token` at the configured API root (grammy is imported on the first call). */
async function telegramApi(settings: Pick<IntegrationSettings, 'telegramApiRoot'>, token: string): Promise<Api> {
  const { Api } = await loadGrammy();
  return new Api(token, { apiRoot: settings.telegramApiRoot });
}

/**
 * Runs one Bot API call (`method` names it in errors) with the settings' retries: an `HttpError` (network),
 * a 429 (after Telegram's `retry_after`, at most 30 s) or a 5xx is retried; another `GrammyError` is not.
 * Throws {@link TelegramCallError} after the last attempt.
 */
async function callTelegram<T>(
  settings: Pick<IntegrationSettings, 'retry'>,
  method: string,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await pRetry(async () => {
      try {
        return await call();
      } catch (error) {
        const { GrammyError, HttpError } = await loadGrammy();
        if (error instanceof GrammyError) {
          const retryable = error.error_code === 429 || error.error_code >= 500;
          const failure = new TelegramCallError(
            `Telegram refused ${method}: ${error.description} (${error.error_code}).`,
            error.error_code,
          );
          if (!retryable) throw new AbortError(failure);
          const waitSeconds = Math.min(30, error.parameters?.retry_after ?? 0);
          if (waitSeconds > 0 && settings.retry.minTimeoutMs > 0)
            await new Promise((resolve) => setTimeout(resolve, waitSeconds * 1000));
          throw failure;
        }
        if (error instanceof HttpError)
          throw new TelegramCallError(`Telegram could not be reached for ${method}.`, null);
        throw error;
      }
    }, retryOptions(settings.retry));
  } catch (error) {
    if (error instanceof TelegramCallError) throw error;
    logger.warn('telegram call failed unexpectedly', {
      method,
      error: error instanceof Error ? error.name : 'unknown',
    });
    throw new TelegramCallError(`The Telegram call ${method} failed unexpectedly.`, null);
  }
}

/** The bot behind a token, as `getMe` describes it. */
export interface TelegramBotIdentity {
  id: number;
  username: string | null;
}

/**
 * Checks `token` with `getMe` and registers the project's webhook with `setWebhook` (`url`, the random
 * `secretToken` Telegram will send in `X-Telegram-Bot-Api-Secret-Token`, only membership updates).
 * Returns the bot. Throws {@link TelegramCallError} (401 for a revoked or wrong token).
 */
export async function registerTelegramWebhook(
  settings: IntegrationSettings,
  token: string,
  url: string,
  secretToken: string,
): Promise<TelegramBotIdentity> {
  const api = await telegramApi(settings, token);
  const me = await callTelegram(settings, 'getMe', () => api.getMe());
  await callTelegram(settings, 'setWebhook', () =>
    api.setWebhook(url, {
      secret_token: secretToken,
      allowed_updates: [...TELEGRAM_ALLOWED_UPDATES],
      drop_pending_updates: true,
    }),
  );
  return { id: me.id, username: me.username ?? null };
}

/** Removes the bot's webhook (`deleteWebhook`). Throws {@link TelegramCallError}. */
export async function deleteTelegramWebhook(settings: IntegrationSettings, token: string): Promise<void> {
  const api = await telegramApi(settings, token);
  await callTelegram(settings, 'deleteWebhook', () => api.deleteWebhook());
}

/**
 * Sends `text` (plain, no link previews) to chat `chatId` with the bot of `token` (`sendMessage`, the settings'
 * retries). Throws {@link TelegramCallError}.
 */
export async function sendTelegramMessage(
  settings: IntegrationSettings,
  token: string,
  chatId: number,
  text: string,
): Promise<void> {
  const api = await telegramApi(settings, token);
  await callTelegram(settings, 'sendMessage', () =>
    api.sendMessage(chatId, text, { link_preview_options: { is_disabled: true } }),
  );
}

/** A chat id as the Bot API takes it: a number for numeric ids, else the `@username` text. */
function telegramChatId(platformResourceId: string): number | string {
  return /^-?\d+$/.test(platformResourceId) ? Number(platformResourceId) : platformResourceId;
}

/** A Telegram user id (a number); null when the platform user id is not one. */
function telegramUserId(platformUserId: string | null): number | null {
  return platformUserId !== null && /^\d+$/.test(platformUserId) ? Number(platformUserId) : null;
}

/**
 * What {@link telegramPlatformAdapter} needs: the store (credentials, linked chats) and the settings (read when a call
 * is made).
 */
export interface TelegramAdapterDependencies {
  store: Store;
  settings: () => IntegrationSettings;
  /** Epoch milliseconds now (invite-link expiry). */
  nowMs: () => number;
}

const failure = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

/**
 * The Telegram `PlatformAdapter` (DESIGN D17, D22) on the project's linked chats: grant = lift a removal + a personal
 * single-use invite link ({@link INVITE_LINK_LIFETIME_SECONDS}); revoke/kick = ban then unban (no lasting ban); ban =
 * for good; presence = `getChatMember`. No bot → a failure naming `PUT /v1/projects/{id}/bot`; no Telegram user id or
 * no linked chats → no call.
 */
export function telegramPlatformAdapter(dependencies: TelegramAdapterDependencies): PlatformAdapter {
  /** Opens the bot of the target's project, or answers why not. */
  const botOf = async (
    target: PlatformProjectTarget,
  ): Promise<{ api: Api; settings: IntegrationSettings } | { ok: false; reason: string }> => {
    const settings = dependencies.settings();
    const credential = await openCredential(
      dependencies.store,
      settings.keyEncryptionKey,
      target.project_id,
      TELEGRAM_CREDENTIAL,
      target.team_id,
    );
    const token = credential?.secrets.bot_token;
    if (!token)
      return failure(
        `No Telegram bot is connected to project ${target.project_id}; connect one with PUT /v1/projects/${target.project_id}/bot.`,
      );
    return { api: await telegramApi(settings, token), settings };
  };
  const linkedChats = async (target: PlatformTarget): Promise<(number | string)[]> => {
    const project = await dependencies.store.get(keys.project(target.team_id, target.project_id), {
      projection: 'resources',
    });
    const resources = (project ? parseProjectResources(project).resources : undefined) ?? [];
    return resources
      .filter((resource) => resource.kind === 'channel' || resource.kind === 'group')
      .map((resource) => telegramChatId(resource.platform_resource_id));
  };
  /** Runs `action` on every linked chat; the first failure is the result. */
  const inEveryChat = async (
    target: PlatformTarget,
    action: (api: Api, settings: IntegrationSettings, chatId: number | string, userId: number) => Promise<void>,
  ): Promise<PlatformResult> => {
    const userId = telegramUserId(target.platform_user_id);
    if (userId === null) return { ok: true };
    const chats = await linkedChats(target);
    if (chats.length === 0) return { ok: true };
    const bot = await botOf(target);
    if ('ok' in bot) return bot;
    for (const chatId of chats) {
      try {
        await action(bot.api, bot.settings, chatId, userId);
      } catch (error) {
        if (error instanceof TelegramCallError) return failure(error.message);
        throw error;
      }
    }
    return { ok: true };
  };
  const removeWithoutBan = (api: Api, settings: IntegrationSettings, chatId: number | string, userId: number) =>
    callTelegram(settings, 'banChatMember', () => api.banChatMember(chatId, userId))
      .then(() =>
        callTelegram(settings, 'unbanChatMember', () => api.unbanChatMember(chatId, userId, { only_if_banned: true })),
      )
      .then(() => undefined);

  return {
    platform: 'telegram',
    async grantAccess(target, resource): Promise<PlatformGrantResult> {
      if (resource.kind !== 'channel' && resource.kind !== 'group') return { ok: true };
      const bot = await botOf(target);
      if ('ok' in bot) return bot;
      const chatId = telegramChatId(resource.platform_resource_id);
      const userId = telegramUserId(target.platform_user_id);
      try {
        if (userId !== null)
          await callTelegram(bot.settings, 'unbanChatMember', () =>
            bot.api.unbanChatMember(chatId, userId, { only_if_banned: true }),
          );
        const expireDate = Math.floor(dependencies.nowMs() / 1000) + INVITE_LINK_LIFETIME_SECONDS;
        const link = await callTelegram(bot.settings, 'createChatInviteLink', () =>
          bot.api.createChatInviteLink(chatId, {
            name: `subscriber ${target.subscriber_id.slice(0, 8)}`,
            member_limit: 1,
            expire_date: expireDate,
          }),
        );
        return {
          ok: true,
          invite_link: {
            url: link.invite_link,
            expires_at: link.expire_date ? isoTime(link.expire_date * 1000) : null,
          },
        };
      } catch (error) {
        if (error instanceof TelegramCallError) return failure(error.message);
        throw error;
      }
    },
    async revokeInviteLink(target, resource, url): Promise<PlatformResult> {
      if (resource.kind !== 'channel' && resource.kind !== 'group') return { ok: true };
      const bot = await botOf(target);
      if ('ok' in bot) return bot;
      try {
        // The reason names the method and Telegram's description, never the link (a bearer secret).
        await callTelegram(bot.settings, 'revokeChatInviteLink', () =>
          bot.api.revokeChatInviteLink(telegramChatId(resource.platform_resource_id), url),
        );
        return { ok: true };
      } catch (error) {
        if (error instanceof TelegramCallError) return failure(error.message);
        throw error;
      }
    },
    async revokeAccess(target) {
      return inEveryChat(target, removeWithoutBan);
    },
    async kick(target) {
      return inEveryChat(target, removeWithoutBan);
    },
    async ban(target) {
      return inEveryChat(target, (api, settings, chatId, userId) =>
        callTelegram(settings, 'banChatMember', () => api.banChatMember(chatId, userId)).then(() => undefined),
      );
    },
    async unban(target) {
      return inEveryChat(target, (api, settings, chatId, userId) =>
        callTelegram(settings, 'unbanChatMember', () =>
          api.unbanChatMember(chatId, userId, { only_if_banned: true }),
        ).then(() => undefined),
      );
    },
    async presenceOf(target): Promise<PlatformPresenceResult> {
      // getChatMember in each linked chat: gone from any of them (left, or removed: kicked) is what counts.
      let presence: 'present' | 'left' | 'kicked' | 'unknown' = 'unknown';
      const result = await inEveryChat(target, async (api, settings, chatId, userId) => {
        const member = await callTelegram(settings, 'getChatMember', () => api.getChatMember(chatId, userId));
        if (member.status === 'left' || member.status === 'kicked') presence = member.status;
        else if (presence === 'unknown') presence = 'present';
      });
      return result.ok ? { ok: true, presence } : result;
    },
  };
}
