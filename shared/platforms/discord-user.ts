import type { RESTPostOAuth2AccessTokenResult } from 'discord-api-types/v10';
import { isoTime } from '../clock.js';
import type { KeyEncryptionKey } from '../credentials/envelope.js';
import { describeCredential, openCredential, sealCredential, type CredentialKind } from '../credentials/repository.js';
import { credentialStore } from '../store/credentials.js';
import { keys } from '../store/keys.js';
import type { Store } from '../store/store.js';
import type { Item } from '../store/requests.js';
import { DiscordCallError, loadDiscordClient, type DiscordSettings } from './discord.js';

/**
 * A subscriber's Discord OAuth2 tokens (DESIGN D28): the `discord_user` credential of the subscriber
 * (secrets `access_token`, `refresh_token`; public `platform_user_id`, `scope`, `expires_at`), refreshed
 * with the `refresh_token` grant when expired before a use that needs them (the guild join). A refresh
 * Discord refuses leaves a credential without tokens marked `link_state: relink_required`: the subscriber
 * must link their account again (the portal says so). Tokens are never returned by an operation or logged.
 */

/**
 * The credential kind of a subscriber's Discord OAuth2 tokens (one per subscriber: the subject is the subscriber id).
 */
export const DISCORD_USER_CREDENTIAL: CredentialKind = 'discord_user';

/** Tokens expiring within this margin are refreshed first, in milliseconds (1 minute). */
const REFRESH_MARGIN_MS = 60 * 1000;

/** Whose Discord tokens: the subscriber's team, project and id. */
interface DiscordUserRef {
  teamId: string;
  projectId: string;
  subscriberId: string;
}

/** The OAuth2 client the tokens were issued to (the project's application): its id and secret. */
interface DiscordOAuthClient {
  applicationId: string;
  clientSecret: string;
}

/**
 * The credential item holding `tokens` (from the token endpoint at `nowMs`, epoch milliseconds) of Discord user
 * `userId`, sealed for `ref` (`expires_at` = now + `expires_in`). Store it with `putCredential` or {@link
 * DiscordUserTokens}.
 */
export async function sealDiscordUserTokens(
  kek: KeyEncryptionKey,
  ref: DiscordUserRef,
  tokens: RESTPostOAuth2AccessTokenResult,
  userId: string,
  nowMs: number,
): Promise<Item> {
  return sealCredential(
    kek,
    { teamId: ref.teamId, projectId: ref.projectId, kind: DISCORD_USER_CREDENTIAL, subjectId: ref.subscriberId },
    { access_token: tokens.access_token, refresh_token: tokens.refresh_token },
    { platform_user_id: userId, scope: tokens.scope, expires_at: isoTime(nowMs + tokens.expires_in * 1000) },
    isoTime(nowMs),
  );
}

/**
 * A subscriber's Discord link state (DESIGN D28): no tokens stored, tokens usable, or a refused refresh (link again).
 */
type DiscordUserLinkState = 'none' | 'linked' | 'relink_required';

/** The marker of a credential whose refresh Discord refused (public `link_state`). */
const RELINK_REQUIRED = 'relink_required';

/** Reads a subscriber's {@link DiscordUserLinkState} (one GetItem, nothing opened; another team's credential: none). */
export async function discordUserLinkState(store: Store, ref: DiscordUserRef): Promise<DiscordUserLinkState> {
  const item = await store.get(keys.credential(ref.projectId, `${DISCORD_USER_CREDENTIAL}#${ref.subscriberId}`));
  const credential = item ? describeCredential(item) : null;
  if (!credential || credential.team_id !== ref.teamId) return 'none';
  return credential.public.link_state === RELINK_REQUIRED ? 'relink_required' : 'linked';
}

/** The subscriber's usable access token, none stored, or a link to make again. */
type DiscordUserAccess = { state: 'linked'; accessToken: string } | { state: 'none' } | { state: 'relink_required' };

/**
 * The subscriber's Discord access token at `nowMs` (epoch ms): the stored one, or, expiring within a minute, a
 * refreshed one stored sealed (conditional; a concurrent refresh wins). A refused refresh marks the credential
 * `relink_required`. Throws {@link DiscordCallError} when Discord is unreachable (the caller records and retries).
 */
export async function discordUserAccess(
  dependencies: { store: Store; keyEncryptionKey: KeyEncryptionKey; discord: DiscordSettings; nowMs: number },
  ref: DiscordUserRef,
  oauthClient: DiscordOAuthClient,
): Promise<DiscordUserAccess> {
  const { store, keyEncryptionKey, nowMs } = dependencies;
  const credential = await openCredential(
    store,
    keyEncryptionKey,
    ref.projectId,
    DISCORD_USER_CREDENTIAL,
    ref.teamId,
    ref.subscriberId,
  );
  if (!credential) return { state: 'none' };
  const fields = credential.description.public;
  const { access_token: accessToken, refresh_token: refreshToken } = credential.secrets;
  if (fields.link_state === RELINK_REQUIRED || !accessToken || !refreshToken) return { state: 'relink_required' };
  if (!fields.expires_at || Date.parse(fields.expires_at) - REFRESH_MARGIN_MS > nowMs)
    return { state: 'linked', accessToken };
  /** Stores `item` in place of the credential as read; false when it changed meanwhile (a concurrent refresh). */
  const replace = (item: Item) => credentialStore.replace(store, item, credential.description.created_at);
  const client = await loadDiscordClient();
  try {
    const tokens = await client.refreshTokens(dependencies.discord, {
      clientId: oauthClient.applicationId,
      clientSecret: oauthClient.clientSecret,
      refreshToken,
    });
    await replace(await sealDiscordUserTokens(keyEncryptionKey, ref, tokens, fields.platform_user_id ?? '', nowMs));
    return { state: 'linked', accessToken: tokens.access_token };
  } catch (error) {
    if (!(error instanceof DiscordCallError) || error.status === null) throw error;
    const marker = await sealCredential(
      keyEncryptionKey,
      { teamId: ref.teamId, projectId: ref.projectId, kind: DISCORD_USER_CREDENTIAL, subjectId: ref.subscriberId },
      {},
      {
        ...(fields.platform_user_id ? { platform_user_id: fields.platform_user_id } : {}),
        link_state: RELINK_REQUIRED,
      },
      isoTime(nowMs),
    );
    // Refused because a concurrent refresh used the refresh token first: take the tokens it stored.
    if (!(await replace(marker))) return discordUserAccess(dependencies, ref, oauthClient);
    return { state: 'relink_required' };
  }
}
