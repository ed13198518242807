import { DEFAULT_DISCORD_API_BASE_URL } from '../config.js';
import { openCredential, type CredentialKind } from '../credentials/repository.js';
import type { IntegrationSettings } from '../integrations.js';
import { keys } from '../store/keys.js';
import type { Store } from '../store/store.js';
import { discordUserAccess } from './discord-user.js';
import {
  parseProjectResources,
  type PlatformAdapter,
  type PlatformMemberPage,
  type PlatformPresenceResult,
  type PlatformProjectTarget,
  type PlatformResult,
  type PlatformTarget,
} from './platform-adapter.js';

/**
 * The Discord platform (DESIGN D28) through `@discordjs/rest` (`discord-client.ts`, imported on first use),
 * pointed at `DISCORD_API_BASE_URL` (tests: a loopback fake). A project's bot token and OAuth2 client secret
 * are a stored credential (`discord_bot`, DESIGN D16), opened only for a call; its application id and public
 * key are public fields of it. Failures follow Telegram's rules: a reason naming the call and Discord's
 * message (never a token), recorded on the member and retried by the member's sync deadline.
 */

/**
 * The credential kind of a Discord bot: secrets `bot_token` and `client_secret`; public `application_id`, `public_key`,
 * `platform_bot_id`.
 */
export const DISCORD_CREDENTIAL: CredentialKind = 'discord_bot';

/** How the Discord client is set up: the API base URL, its retries, request timeout and rate-limit offset. */
export interface DiscordSettings {
  apiBaseUrl: string;
  retries: number;
  timeoutMs: number;
  rateLimitOffsetMs: number;
}

/**
 * The Discord client settings of the integration settings: their API base URL and retries (no waiting beyond Discord's
 * own `retry_after` when retries wait 0, as in tests).
 */
export function discordSettingsOf(settings: Pick<IntegrationSettings, 'discordApiBaseUrl' | 'retry'>): DiscordSettings {
  const fast = settings.retry.minTimeoutMs === 0;
  return {
    apiBaseUrl: settings.discordApiBaseUrl ?? DEFAULT_DISCORD_API_BASE_URL,
    retries: settings.retry.retries,
    timeoutMs: fast ? 5000 : 15_000,
    rateLimitOffsetMs: fast ? 0 : 50,
  };
}

/** A Discord call failed for good (after the client's retries); `message` is safe to show (no token). */
export class DiscordCallError extends Error {
  /** Discord's HTTP status of a refusal (4xx but 429), or null when Discord could not be reached or served the call. */
  readonly status: number | null;
  constructor(message: string, status: number | null) {
    super(message);
    this.name = 'DiscordCallError';
    this.status = status;
  }
}

/** The client module, once imported. */
let discordClient: Promise<typeof import('./discord-client.js')> | undefined;

/** The Discord client module (`discord-client.ts`), imported on first use so only bundles that call Discord load it. */
export function loadDiscordClient(): Promise<typeof import('./discord-client.js')> {
  discordClient ??= import('./discord-client.js');
  return discordClient;
}

/** A Discord snowflake (a user, guild, role or application id). */
const DISCORD_SNOWFLAKE = /^\d{15,25}$/;

/**
 * What {@link discordPlatformAdapter} needs: the store (credentials, linked resources), the settings (read when a call
 * is made) and the clock (epoch milliseconds: token expiry).
 */
export interface DiscordAdapterDependencies {
  store: Store;
  settings: () => IntegrationSettings;
  nowMs: () => number;
}

const failure = (reason: string): { ok: false; reason: string } => ({ ok: false, reason });

/**
 * The Discord `PlatformAdapter` (DESIGN D28): role grants and revocations, `server` grants with the linked subscriber's
 * OAuth token (refreshed; fails when they must link again), kick, ban and unban in the project's linked server, and an
 * audit's reads (a member's presence, the server's member list). No bot
 * credential → a failure naming `PUT /v1/projects/{id}/bot`; no Discord user id or no linked server → no call.
 */
export function discordPlatformAdapter(dependencies: DiscordAdapterDependencies): PlatformAdapter {
  /**
   * The linked server, the bot token and the client settings of the target's project, or why there are none (null:
   * nothing to do).
   */
  const context = async (
    target: PlatformProjectTarget,
  ): Promise<
    | { guildId: string; token: string; applicationId: string; clientSecret: string; settings: DiscordSettings }
    | { ok: false; reason: string }
    | null
  > => {
    const project = await dependencies.store.get(keys.project(target.team_id, target.project_id), {
      projection: 'resources',
    });
    const resources = (project ? parseProjectResources(project).resources : undefined) ?? [];
    const server = resources.find((resource) => resource.kind === 'server');
    if (!server) return null;
    const settings = dependencies.settings();
    const credential = await openCredential(
      dependencies.store,
      settings.keyEncryptionKey,
      target.project_id,
      DISCORD_CREDENTIAL,
      target.team_id,
    );
    const token = credential?.secrets.bot_token;
    if (!token)
      return failure(
        `No Discord bot is connected to project ${target.project_id}; connect one with PUT /v1/projects/${target.project_id}/bot.`,
      );
    const clientSecret = credential.secrets.client_secret ?? '';
    const applicationId = credential.description.public.application_id ?? '';
    return {
      guildId: server.platform_resource_id,
      token,
      applicationId,
      clientSecret,
      settings: discordSettingsOf(settings),
    };
  };
  /** Runs `action` for a known Discord user in the project's server; a Discord failure is the result. */
  const act = async (
    target: { team_id: string; project_id: string; platform_user_id: string | null },
    action: (
      client: Awaited<ReturnType<typeof loadDiscordClient>>,
      settings: DiscordSettings,
      token: string,
      guildId: string,
      userId: string,
      bot: { applicationId: string; clientSecret: string },
    ) => Promise<PlatformResult | void>,
  ): Promise<PlatformResult> => {
    const userId = target.platform_user_id;
    if (userId === null || !DISCORD_SNOWFLAKE.test(userId)) return { ok: true };
    const found = await context(target);
    if (found === null) return { ok: true };
    if ('ok' in found) return found;
    try {
      return (
        (await action(await loadDiscordClient(), found.settings, found.token, found.guildId, userId, found)) ?? {
          ok: true,
        }
      );
    } catch (error) {
      if (error instanceof DiscordCallError) return failure(error.message);
      throw error;
    }
  };
  const done = async (): Promise<PlatformResult> => ({ ok: true });
  return {
    platform: 'discord',
    async grantAccess(target, resource) {
      if (resource.kind === 'server') {
        return act(target, async (client, settings, token, guildId, userId, bot) => {
          if (await client.isGuildMember(settings, token, guildId, userId)) return { ok: true };
          const ref = { teamId: target.team_id, projectId: target.project_id, subscriberId: target.subscriber_id };
          const { keyEncryptionKey } = dependencies.settings();
          const access = await discordUserAccess(
            { store: dependencies.store, keyEncryptionKey, discord: settings, nowMs: dependencies.nowMs() },
            ref,
            bot,
          );
          if (access.state === 'none') return { ok: true };
          if (access.state === 'relink_required')
            return failure(
              `Discord refused to renew subscriber ${target.subscriber_id}\u2019s authorization; they must link their Discord account again from the portal.`,
            );
          await client.addGuildMember(settings, token, guildId, userId, access.accessToken, []);
        });
      }
      if (resource.kind !== 'role') return { ok: true };
      return act(target, (client, settings, token, guildId, userId) =>
        client.addMemberRole(settings, token, guildId, userId, resource.platform_resource_id),
      );
    },
    revokeInviteLink: done,
    async revokeAccess(target: PlatformTarget, resource) {
      if (resource.kind !== 'role') return { ok: true };
      return act(target, (client, settings, token, guildId, userId) =>
        client.removeMemberRole(settings, token, guildId, userId, resource.platform_resource_id),
      );
    },
    async kick(target) {
      return act(target, (client, settings, token, guildId, userId) =>
        client.removeMember(settings, token, guildId, userId),
      );
    },
    async ban(target, reason) {
      return act(target, (client, settings, token, guildId, userId) =>
        client.banMember(settings, token, guildId, userId, reason),
      );
    },
    async unban(target) {
      return act(target, (client, settings, token, guildId, userId) =>
        client.unbanMember(settings, token, guildId, userId),
      );
    },
    async presenceOf(target): Promise<PlatformPresenceResult> {
      let presence: 'present' | 'left' | 'unknown' = 'unknown';
      const result = await act(target, async (client, settings, token, guildId, userId) => {
        presence = (await client.isGuildMember(settings, token, guildId, userId)) ? 'present' : 'left';
      });
      return result.ok ? { ok: true, presence } : result;
    },
    async listMembers(target, after): Promise<PlatformMemberPage> {
      const found = await context(target);
      if (found === null) return { ok: true, members: [], next: null };
      if ('ok' in found) return found;
      try {
        const client = await loadDiscordClient();
        const page = await client.listGuildMembers(found.settings, found.token, found.guildId, after);
        const members = page.map((member) => ({ platform_user_id: member.userId, role_ids: member.roleIds }));
        return {
          ok: true,
          members,
          next: page.length < client.GUILD_MEMBERS_PAGE_SIZE ? null : (members.at(-1)?.platform_user_id ?? null),
        };
      } catch (error) {
        if (error instanceof DiscordCallError) return failure(error.message);
        throw error;
      }
    },
  };
}
