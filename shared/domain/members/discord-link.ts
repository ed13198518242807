import { randomBytes } from 'node:crypto';
import { isoTime } from '../../clock.js';
import { ConfigurationError, ENVIRONMENT_VARIABLES } from '../../config.js';
import { openCredential, putCredential } from '../../credentials/repository.js';
import { ProblemError } from '../../errors.js';
import { hookPrincipal } from '../../hooks/principal.js';
import { integrationsOf, type IntegrationRuntime } from '../../integrations.js';
import { logger } from '../../logger.js';
import { callPlatform, platformAdapters, type PlatformRuntime } from '../../platforms/adapters.js';
import { DISCORD_CREDENTIAL, DiscordCallError, discordSettingsOf, loadDiscordClient } from '../../platforms/discord.js';
import { discordUserLinkState, sealDiscordUserTokens } from '../../platforms/discord-user.js';
import { consumeDiscordLinkState, putDiscordLinkState } from '../../store/discord-link-states.js';
import type { Store } from '../../store/store.js';
import { readPlanItems, readProjectItem, readSubscriberItem } from '../../store/subscriptions/reads.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { toPlan } from '../plans/repository.js';
import { toProject } from '../projects/repository.js';
import { parseStoredSubscriber } from '../subscribers/record.js';
import { updateSubscriber } from '../subscribers/changes.js';
import { subscriptionsOfSubscriber } from '../subscriptions/access-facts.js';
import { resourcesGrantedBy } from '../subscriptions/platform-access.js';
import { hasAccess } from '../subscriptions/state-machine.js';
import { recordPlatformOutcome } from './platform-retry.js';
import { recordPlatformMembership } from './platform-updates.js';
import type { Member } from './schema.js';

/**
 * Discord account linking (DESIGN D28), the domain part the portal's pages call: the OAuth2
 * authorization-code flow (scopes `identify guilds.join`) with a single-use `state` bound to the portal
 * session, then the member created or linked (`platform_user_id` = the Discord user id, the same events as
 * a Telegram join) and added to the server with their plan's roles. The user's OAuth2 tokens are a
 * `discord_user` credential of the subscriber (envelope-encrypted), never returned or logged.
 */

/** Where users authorize the application (always Discord itself, whatever `DISCORD_API_BASE_URL` says). */
const DISCORD_AUTHORIZE_URL = 'https://discord.com/oauth2/authorize';
/** The OAuth2 scopes asked for: who the user is, and adding them to the server. */
const DISCORD_LINK_SCOPES = 'identify guilds.join';
/** How long a linking `state` works: 10 minutes. */
const STATE_LIFETIME_MS = 10 * 60 * 1000;

/**
 * What linking needs of a runtime: the store and clock (transactions), integration settings and the platform adapters'
 * runtime.
 */
type LinkRuntime = UnitOfWorkRuntime & IntegrationRuntime & PlatformRuntime;

/** The redirect URL registered in the Developer Portal: `<PUBLIC_BASE_URL>/portal/{project_id}/discord/callback`. */
function discordRedirectUri(runtime: IntegrationRuntime, projectId: string): string {
  const base = integrationsOf(runtime).publicBaseUrl;
  if (!base)
    throw new ConfigurationError(
      `Configuration of the service: ${ENVIRONMENT_VARIABLES.publicBaseUrl} is required for Discord account linking (its redirect URL).`,
    );
  return `${base}/portal/${projectId}/discord/callback`;
}

/** The project's Discord bot credential (of `teamId`), or VALIDATION_FAILED when the project has none. */
async function discordBotOf(runtime: LinkRuntime, teamId: string, projectId: string) {
  const credential = await openCredential(
    runtime.store,
    integrationsOf(runtime).keyEncryptionKey,
    projectId,
    DISCORD_CREDENTIAL,
    teamId,
  );
  const token = credential?.secrets.bot_token;
  const clientSecret = credential?.secrets.client_secret;
  const applicationId = credential?.description.public.application_id;
  if (!token || !clientSecret || !applicationId)
    throw new ProblemError(
      'VALIDATION_FAILED',
      `Project ${projectId} has no Discord bot connected; account linking is not available.`,
    );
  return { token, clientSecret, applicationId };
}

/**
 * The URL that starts linking a subscriber's Discord account from a portal session (DESIGN D28):
 * `https://discord.com/oauth2/authorize` with the application's client id, the redirect URL ({@link
 * discordRedirectUri}), scopes `identify guilds.join` and a fresh `state`, stored hashed, single use, bound to
 * `portalSessionId` and `subscriberId`, working for 10 minutes. Errors: VALIDATION_FAILED (no Discord bot).
 */
export async function discordAuthorizeUrl(
  runtime: LinkRuntime,
  input: { teamId: string; projectId: string; portalSessionId: string; subscriberId: string },
): Promise<{ url: string; expires_at: string }> {
  const bot = await discordBotOf(runtime, input.teamId, input.projectId);
  const state = randomBytes(32).toString('base64url');
  const nowMs = runtime.clock.nowMs();
  const expiresAt = isoTime(nowMs + STATE_LIFETIME_MS);
  await putDiscordLinkState(runtime.store, state, input, nowMs + STATE_LIFETIME_MS);
  const query = new URLSearchParams({
    client_id: bot.applicationId,
    response_type: 'code',
    redirect_uri: discordRedirectUri(runtime, input.projectId),
    scope: DISCORD_LINK_SCOPES,
    state,
    prompt: 'consent',
  });
  return { url: `${DISCORD_AUTHORIZE_URL}?${query.toString()}`, expires_at: expiresAt };
}

/**
 * Uses up a linking state (a conditional delete: once only, unexpired, same project, subscriber and portal session);
 * returns its team.
 */
async function consumeState(
  runtime: LinkRuntime,
  input: { projectId: string; portalSessionId: string; subscriberId: string; state: string },
): Promise<string> {
  const refused = () =>
    new ProblemError(
      'VALIDATION_FAILED',
      'This Discord link attempt is unknown, already used or expired; start linking again.',
      { errors: [{ path: 'state', message: 'unknown, used or expired' }] },
    );
  const teamId = await consumeDiscordLinkState(runtime.store, input.state, input, isoTime(runtime.clock.nowMs()));
  if (!teamId) throw refused();
  return teamId;
}

/**
 * Runs a Discord call of the linking flow: a refusal is the user's (VALIDATION_FAILED on `path`), anything else
 * PROVIDER_UNAVAILABLE.
 */
async function discordStep<T>(path: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof DiscordCallError)) throw error;
    if (error.status === null)
      throw new ProblemError('PROVIDER_UNAVAILABLE', `${error.message} Start linking again later.`);
    throw new ProblemError('VALIDATION_FAILED', `${error.message} Start linking again.`, {
      errors: [{ path, message: error.message }],
    });
  }
}

/**
 * A subscriber's Discord link (DESIGN D28): none, linked, or linked but its authorization refused on refresh (link
 * again).
 */
export type DiscordLinkState = 'not_linked' | 'linked' | 'relink_required';

/**
 * The {@link DiscordLinkState} of `subscriber` (as read, of `teamId`): `relink_required` when Discord refused to
 * refresh its stored OAuth2 tokens (`platforms/discord-user.ts`), else `linked` when it has a Discord user id. One
 * GetItem.
 */
export async function discordLinkState(
  store: Store,
  teamId: string,
  subscriber: { id: string; project_id: string; platform_user_id: string | null },
): Promise<DiscordLinkState> {
  const state = await discordUserLinkState(store, {
    teamId,
    projectId: subscriber.project_id,
    subscriberId: subscriber.id,
  });
  if (state === 'relink_required') return state;
  return subscriber.platform_user_id === null ? 'not_linked' : 'linked';
}

/** What linking did: the member, and whether the person is in the server with their roles now (or why not). */
export interface DiscordLinkResult {
  member: Member;
  /**
   * `joined`: added to the server now; `already_in`: was in, roles added; `no_access`: no subscription with access, not
   * added; `failed`: see `reason`.
   */
  guild: 'joined' | 'already_in' | 'no_access' | 'failed';
  /** Why the server step failed (a Discord message, no token), else null. */
  reason: string | null;
}

/**
 * Completes Discord linking (DESIGN D28): uses up `state` (single use, bound to session and subscriber), exchanges
 * `code`, stores the tokens encrypted, links the Discord user (replacing another: `member.updated`), joins the member
 * and grants access; a grant failure becomes `platform_error` (retried). Errors: VALIDATION_FAILED; CONFLICT (another's
 * account); PROVIDER_UNAVAILABLE.
 */
export async function completeDiscordLink(
  runtime: LinkRuntime,
  input: { projectId: string; portalSessionId: string; subscriberId: string; code: string; state: string },
): Promise<DiscordLinkResult> {
  const { projectId, subscriberId } = input;
  const teamId = await consumeState(runtime, input);
  const settings = integrationsOf(runtime);
  const bot = await discordBotOf(runtime, teamId, projectId);
  const client = await loadDiscordClient();
  const discord = discordSettingsOf(settings);
  const tokens = await discordStep('code', () =>
    client.exchangeCode(discord, {
      clientId: bot.applicationId,
      clientSecret: bot.clientSecret,
      code: input.code,
      redirectUri: discordRedirectUri(runtime, projectId),
    }),
  );
  const user = await discordStep('code', () => client.currentUser(discord, tokens.access_token, 'Bearer'));

  const principal = hookPrincipal(teamId, 'discord');
  const [subscriberItem, projectItem] = await Promise.all([
    readSubscriberItem(runtime.store, teamId, projectId, subscriberId),
    readProjectItem(runtime.store, teamId, projectId),
  ]);
  if (!subscriberItem || !projectItem) throw new ProblemError('NOT_FOUND', `No subscriber ${subscriberId}.`);
  const project = toProject(projectItem);
  const roleResources = project.resources.filter((resource) => resource.kind === 'role');
  const previous = parseStoredSubscriber(subscriberItem).platform_user_id ?? null;
  if (previous !== null && previous !== user.id) {
    // Another account was linked: it loses the roles the service gave it (best effort; logged).
    const adapter = platformAdapters(runtime).discord!;
    for (const resource of roleResources) {
      const outcome = await callPlatform(() =>
        adapter.revokeAccess({ team_id: teamId, project_id: projectId, platform_user_id: previous }, resource),
      );
      if (!outcome.ok)
        logger.warn('the replaced Discord account kept a role', {
          project_id: projectId,
          subscriber_id: subscriberId,
          reason: outcome.reason,
        });
    }
  }
  if (previous !== user.id) await updateSubscriber(runtime, principal, subscriberId, { platform_user_id: user.id });
  const sealed = await sealDiscordUserTokens(
    settings.keyEncryptionKey,
    { teamId, projectId, subscriberId },
    tokens,
    user.id,
    runtime.clock.nowMs(),
  );
  await unitOfWork(runtime, teamId, (tx) => putCredential(tx, sealed));
  const member = await recordPlatformMembership(runtime, {
    teamId,
    projectId,
    platformUserId: user.id,
    change: 'joined',
    username: user.username ?? null,
    displayName: user.global_name ?? null,
  });
  if (!member) throw new ProblemError('CONFLICT', 'The Discord account could not be linked; start linking again.');

  const server = project.resources.find((resource) => resource.kind === 'server');
  const subscriptions = await subscriptionsOfSubscriber(runtime.store, teamId, projectId, subscriberId);
  const withAccess = subscriptions.filter((subscription) => hasAccess(subscription.status));
  if (!server || withAccess.length === 0 || member.status === 'banned')
    return { member, guild: 'no_access', reason: null };
  const planIds = [...new Set(withAccess.map((subscription) => subscription.plan_id))];
  const plans = (await readPlanItems(runtime.store, teamId, planIds)).map(toPlan);
  const roles = resourcesGrantedBy(roleResources, plans).map((resource) => resource.platform_resource_id);
  try {
    const joined = await client.addGuildMember(
      discord,
      bot.token,
      server.platform_resource_id,
      user.id,
      tokens.access_token,
      roles,
    );
    if (!joined)
      for (const role of roles)
        await client.addMemberRole(discord, bot.token, server.platform_resource_id, user.id, role);
    // A join that failed before (this account's or a replaced one's) is settled: its error and retry go.
    const recorded = await recordPlatformOutcome(runtime, teamId, member, 'grant_access', { ok: true });
    return { member: recorded, guild: joined ? 'joined' : 'already_in', reason: null };
  } catch (error) {
    if (!(error instanceof DiscordCallError)) throw error;
    logger.warn('discord server join failed; retried by the member\u2019s sync deadline', {
      project_id: projectId,
      subscriber_id: subscriberId,
      reason: error.message,
    });
    // Recorded as platform_error with its durable retry (the sync reconciles: joins, then adds the roles).
    const recorded = await recordPlatformOutcome(runtime, teamId, member, 'grant_access', {
      ok: false,
      reason: error.message,
    });
    return { member: recorded, guild: 'failed', reason: error.message };
  }
}
