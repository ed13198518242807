import { equalInConstantTime } from '../constant-time.js';
import { ProblemError } from '../errors.js';
import { membersInternalOperations } from '../domain/members/internal-operations.js';
import { recordPlatformMembership } from '../domain/members/platform-membership-handler.js';
import type { PlatformMembershipUpdate } from '../domain/members/platform-updates.js';
import { projectsInternalHandlers } from '../domain/projects/internal-handlers.js';
import { projectsInternalOperations } from '../domain/projects/internal-operations.js';
import { anyHandler } from '../operations/handler.js';
import type { RequestScope } from '../store/request-scope.js';
import { readMemberStatus, readPlatformUserClaim } from '../store/members.js';
import { subscriberInvitedBy } from '../domain/subscriptions/platform-access.js';
import { integrationsOf } from '../integrations.js';
import { logger } from '../logger.js';
import { sendTelegramMessage, TELEGRAM_CREDENTIAL } from '../platforms/telegram.js';
import type { Runtime } from '../runtime.js';
import { openHookCredential } from './credential.js';
import type { HookAnswer, HookHandler } from './hook.js';
import { runHookOperation } from './hook-operation.js';
import { hookPrincipal, hookProject } from './principal.js';
import { applyOnce, type HookReceiptRef } from './receipts.js';
import {
  botPermissions,
  displayName,
  groupSender,
  membershipChange,
  TelegramUpdate,
  type TelegramMessage,
  type TelegramUser,
} from './telegram-update.js';

/**
 * The bot's commands, loaded on first use (D23): the hook's usual request, a membership update of a chat, does not run
 * them, and they carry the messaging and portal-link use cases (about 60 KB).
 */
const botMessaging = () => import('./bot-messaging.js');
const membershipCommands = () => import('./membership-command.js');

/**
 * The Telegram hook, `POST /hooks/telegram/{project_id}` (DESIGN D22). The secret-token header is compared in constant
 * time; missing project, no bot and wrong secret get the same 401 after the same work. Idempotent on `update_id`
 * (receipt in the effect's transaction; 200 once stored, 500 → Telegram resends). `chat_member` → join/leave/kick/ban
 * (a revoked invite link's join links no subscriber; the bot's own actions ignored); `my_chat_member` → bot
 * permissions; private `/account` → a one-time portal link (D27); a message in a linked group from someone the bot has
 * not recorded → recorded as joined (D34: Telegram cannot list a chat, so the audit reports the members seen). Every
 * change runs as an internal operation through the pipeline (surface `hook`, D35).
 */

const REFUSED: HookAnswer = { status: 401, body: { error: 'The secret token is missing or wrong.' } };

/**
 * Records a membership update of the project's chats through the pipeline (operation `recordPlatformMembership`,
 * surface `hook`, DESIGN D35), in the receipt's request scope `within` when the update has one.
 */
async function recordMembership(
  runtime: Runtime,
  update: PlatformMembershipUpdate & { updateId: number },
  within?: RequestScope,
): Promise<void> {
  await runHookOperation(runtime, {
    principal: hookPrincipal(update.teamId, 'telegram'),
    operation: membersInternalOperations.recordPlatformMembership,
    handler: anyHandler(recordPlatformMembership),
    input: {
      project_id: update.projectId,
      platform_user_id: update.platformUserId,
      change: update.change,
      ...(update.username !== undefined ? { username: update.username } : {}),
      ...(update.displayName !== undefined ? { display_name: update.displayName } : {}),
      ...(update.invitedSubscriberId ? { invited_subscriber_id: update.invitedSubscriberId } : {}),
    },
    requestId: `telegram:${update.updateId}`,
    within,
  });
}

/**
 * Handles one request to `POST /hooks/telegram/{project_id}` (see the module comment): `projectId` from the
 * path, `secretToken` the `X-Telegram-Bot-Api-Secret-Token` header, `body` the raw body. Answers 200
 * (`{ ok: true }`, with `duplicate: true` for a re-sent update), 401 (any refusal of the secret), 400 (not a
 * Telegram update, or one its operation's input refuses) or 500 (not stored; Telegram retries). Never throws.
 */
async function handleTelegramUpdate(
  runtime: Runtime,
  request: { projectId: string; secretToken: string | undefined; body: string },
): Promise<HookAnswer> {
  try {
    const credential = await openHookCredential(runtime, request.projectId, TELEGRAM_CREDENTIAL);
    if (!equalInConstantTime(request.secretToken, credential?.secrets.webhook_secret) || !credential) return REFUSED;
    const teamId = credential.description.team_id;
    const projectId = credential.description.project_id;
    let parsed: TelegramUpdate;
    try {
      parsed = TelegramUpdate.parse(JSON.parse(request.body));
    } catch {
      return { status: 400, body: { error: 'The body is not a Telegram update.' } };
    }
    const sender = groupSender(parsed.message);
    if (sender) {
      await recordSeenSender(runtime, { teamId, projectId, updateId: parsed.update_id }, parsed.message!, sender);
      return { status: 200, body: { ok: true } };
    }
    const receipt: HookReceiptRef = {
      teamId,
      source: 'telegram',
      projectId,
      providerEventId: String(parsed.update_id),
    };
    const outcome = await applyOnce(
      runtime.store,
      receipt,
      () => runtime.clock.nowMs(),
      (scope) =>
        parsed.message
          ? answerCommand(
              runtime,
              { teamId, projectId, botToken: credential.secrets.bot_token },
              parsed.message,
              parsed.update_id,
            )
          : applyUpdate(
              runtime,
              { teamId, projectId, botId: credential.description.public.platform_bot_id },
              parsed,
              scope,
            ),
    );
    return { status: 200, body: outcome === 'duplicate' ? { ok: true, duplicate: true } : { ok: true } };
  } catch (error) {
    // An update the operation's input refuses (fields past what Telegram itself allows) is no update we can store.
    if (error instanceof ProblemError && error.code === 'VALIDATION_FAILED')
      return { status: 400, body: { error: error.detail } };
    logger.error('telegram update not processed', {
      project_id: request.projectId,
      error: error instanceof Error ? error.name : 'unknown',
    });
    return { status: 500, body: { error: 'The update was not stored; send it again.' } };
  }
}

/**
 * Records the sender of a message in a linked group as joined (with `member.joined`) unless the bot holds them as
 * joined already: a known sender costs one read, of their platform-user claim (which keeps the member's status), and
 * the receipt is not needed (recording a member twice changes nothing). A member held as `left` or `kicked` who writes
 * after that (the message's `date`) is in the chat again: recorded as joined (one conditional update with its event,
 * `joined_at` now). Other status changes arrive through `chat_member` updates.
 */
async function recordSeenSender(
  runtime: Runtime,
  from: { teamId: string; projectId: string; updateId: number },
  message: TelegramMessage,
  sender: TelegramUser,
): Promise<void> {
  const { teamId, projectId } = from;
  const platformUserId = String(sender.id);
  const chatId = message.chat.id;
  const claim = await readPlatformUserClaim(runtime.store, teamId, projectId, platformUserId);
  if (claim?.member_id) {
    // The claim's status copy; a claim written before the copy was kept costs a read of the member.
    const member =
      claim.member_status && claim.member_status_changed_at
        ? { status: claim.member_status, status_changed_at: claim.member_status_changed_at }
        : await readMemberStatus(runtime.store, teamId, projectId, claim.member_id);
    const gone = member?.status === 'left' || member?.status === 'kicked';
    // A message sent before they left (delivered late) does not bring them back.
    if (!gone || (message.date ?? Infinity) * 1000 <= Date.parse(member.status_changed_at)) return;
  }
  const project = await hookProject(runtime.store, teamId, projectId, 'telegram');
  const linked = project?.resources.some(
    (resource) =>
      (resource.kind === 'channel' || resource.kind === 'group') && resource.platform_resource_id === String(chatId),
  );
  if (!linked) return;
  await recordMembership(runtime, {
    ...from,
    platformUserId,
    change: 'joined',
    username: sender.username ?? null,
    displayName: displayName(sender),
  });
}

/** The `/account` command (optionally `/account@bot_name`), alone or with arguments. */
const ACCOUNT_COMMAND = /^\/account(@\w+)?(\s|$)/;
/** `/start` (the bot may message the user, DESIGN D32) and `/stop` (opt out of non-essential messages). */
const MESSAGING_COMMAND = /^\/(start|stop)(@\w+)?(\s|$)/;

/**
 * Answers a private message (DESIGN D27): `/account` from the Telegram user a subscriber of the project is
 * linked to (the platform user's claim) gets a fresh one-time portal link; anyone else the same polite
 * "no membership" (nothing about who is a subscriber). Other messages and group chats are ignored. A failed
 * reply throws (500: Telegram sends the update again).
 */
async function answerCommand(
  runtime: Runtime,
  bot: { teamId: string; projectId: string; botToken: string | undefined },
  message: TelegramMessage,
  updateId: number,
): Promise<void> {
  if (message.chat.type !== 'private' || !message.from || !bot.botToken) return;
  const messaging = MESSAGING_COMMAND.exec(message.text ?? '');
  if (messaging) {
    const command = messaging[1] as 'start' | 'stop';
    const { botMessagingCommand, messagingAnswer } = await botMessaging();
    const answer = await botMessagingCommand(runtime, {
      source: 'telegram',
      teamId: bot.teamId,
      projectId: bot.projectId,
      platformUserId: String(message.from.id),
      command,
      eventId: String(updateId),
    });
    const text = messagingAnswer('telegram', command, answer.found);
    await sendTelegramMessage(integrationsOf(runtime), bot.botToken, message.chat.id, text);
    return;
  }
  if (!ACCOUNT_COMMAND.test(message.text ?? '')) return;
  const { membershipCommand } = await membershipCommands();
  const answer = await membershipCommand(runtime, {
    source: 'telegram',
    teamId: bot.teamId,
    projectId: bot.projectId,
    platformUserId: String(message.from.id),
    eventId: String(updateId),
  });
  const link = answer.found ? answer : null;
  const text = link
    ? `Manage your membership here (the link works once, for 30 minutes):\n${link.url}`
    : 'No membership was found for your Telegram account here. If you have just joined, try again in a minute.';
  await sendTelegramMessage(integrationsOf(runtime), bot.botToken, message.chat.id, text);
}

/** Applies one verified update through the pipeline, its receipt (`within`) in the operation's transaction. */
async function applyUpdate(
  runtime: Runtime,
  bot: { teamId: string; projectId: string; botId: string | undefined },
  update: TelegramUpdate,
  within: RequestScope,
): Promise<void> {
  const { teamId, projectId, botId } = bot;
  const changed = update.chat_member ?? update.my_chat_member;
  if (!changed) return;
  const project = await hookProject(runtime.store, teamId, projectId, 'telegram');
  if (!project) return;
  const linked = project.resources.some(
    (resource) =>
      (resource.kind === 'channel' || resource.kind === 'group') &&
      resource.platform_resource_id === String(changed.chat.id),
  );
  if (update.my_chat_member) {
    if (botId !== undefined && String(update.my_chat_member.new_chat_member.user.id) !== botId) return;
    await runHookOperation(runtime, {
      principal: hookPrincipal(teamId, 'telegram'),
      operation: projectsInternalOperations.recordBotPermissions,
      handler: anyHandler(projectsInternalHandlers.recordBotPermissions),
      input: { project_id: projectId, permissions: botPermissions(update.my_chat_member.new_chat_member) },
      requestId: `telegram:${update.update_id}`,
      within,
    });
    return;
  }
  const memberUpdate = update.chat_member!;
  if (!linked) return;
  // The service's own action, recorded when it was made
  if (botId !== undefined && String(memberUpdate.from.id) === botId) return;
  const change = membershipChange(memberUpdate);
  if (!change) return;
  const user = memberUpdate.new_chat_member.user;
  let invitedSubscriberId: string | undefined;
  const link = memberUpdate.invite_link?.invite_link;
  if (change === 'joined' && link) {
    invitedSubscriberId = await subscriberInvitedBy(runtime.store, teamId, projectId, link);
  }
  await recordMembership(
    runtime,
    {
      teamId,
      projectId,
      updateId: update.update_id,
      platformUserId: String(user.id),
      change,
      username: user.username ?? null,
      displayName: displayName(user),
      invitedSubscriberId,
    },
    within,
  );
}

/** The Telegram hook's {@link HookHandler}: the secret token from `X-Telegram-Bot-Api-Secret-Token`. */
export const telegramHook: HookHandler = (runtime, request) =>
  handleTelegramUpdate(runtime, {
    projectId: request.projectId,
    secretToken: request.headers['x-telegram-bot-api-secret-token'],
    body: request.body,
  });
