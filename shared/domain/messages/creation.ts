import { createHash } from 'node:crypto';
import { isEssentialMessage, type MessageChannel } from '../../catalogues/message-kinds.js';
import { isoTime } from '../../clock.js';
import { newMessageId } from '../../ids.js';
import type { MessageSendMessage, Runtime } from '../../runtime.js';
import { messageStore } from '../../store/messages.js';
import { projectStore } from '../../store/projects.js';
import { subscriberStore } from '../../store/subscribers.js';
import { loadMessageTemplate } from '../message-templates/templates.js';
import type { MessageIntent } from './planning.js';

/**
 * Making messages (DESIGN D32): for each intent, the channels the subscriber can be reached through, one message per
 * channel written with its occasion marker (at most once per occasion), then one queue message per message to send.
 */

/** What is known about reaching a subscriber (from the subscriber, its preferences and the project's bot). */
export interface Reachability {
  /** The subscriber's address, when it has one that did not bounce. */
  email: string | null;
  /** The project's bot platform when the subscriber can get a DM from it (Telegram: started the bot, not blocked). */
  bot: Extract<MessageChannel, 'telegram' | 'discord'> | null;
  optedOut: boolean;
}

/**
 * The channels a message goes through (DESIGN D32), pure: `preferred` = the bot when reachable there, else e-mail;
 * `both` = every reachable channel. Empty when the subscriber cannot be reached.
 */
export function chooseChannels(reach: Reachability, delivery: 'preferred' | 'both'): MessageChannel[] {
  const reachable: MessageChannel[] = [...(reach.bot ? [reach.bot] : []), ...(reach.email ? ['email' as const] : [])];
  return delivery === 'both' ? reachable : reachable.slice(0, 1);
}

/** How a subscriber of a project can be reached now: three strongly consistent reads. */
export async function reachabilityOf(
  runtime: Pick<Runtime, 'store'>,
  teamId: string,
  projectId: string,
  subscriberId: string,
): Promise<(Reachability & { subscriber: Record<string, unknown> }) | null> {
  const [subscriber, preferences, project] = await Promise.all([
    subscriberStore.read(runtime.store, teamId, projectId, subscriberId),
    messageStore.readPreferences(runtime.store, teamId, projectId, subscriberId),
    projectStore.read(runtime.store, teamId, projectId),
  ]);
  if (!subscriber || !project) return null;
  const platform = (project.bot as { platform_type?: string } | null | undefined)?.platform_type;
  const platformUserId = typeof subscriber.platform_user_id === 'string' ? subscriber.platform_user_id : null;
  const blocked = Boolean(preferences?.bot_blocked_at);
  let bot: Reachability['bot'] = null;
  if (platformUserId && !blocked && platform === 'telegram' && preferences?.bot_started_at) bot = 'telegram';
  if (platformUserId && !blocked && platform === 'discord') bot = 'discord';
  const email = typeof subscriber.email === 'string' && !preferences?.email_bounced_at ? subscriber.email : null;
  return { subscriber, email, bot, optedOut: Boolean(preferences?.opted_out_at) };
}

/** The SHA-256 (hex) identity of an occasion (subscriber, subscription, kind, occasion): the key of its marker. */
function occasionIdentity(intent: MessageIntent): string {
  return createHash('sha256')
    .update([intent.subscriberId, intent.subscriptionId ?? '', intent.kind, intent.occasion].join('\n'))
    .digest('hex');
}

/**
 * Makes and queues the messages of `intents` for one team (DESIGN D32): each intent's channels, one message per channel
 * (`skipped` when the subscriber opted out of a non-essential kind, or cannot be reached), written only the first time
 * its occasion is seen; `delivery` (a broadcast's) replaces the template's. Returns the messages queued. Throws on
 * store and queue errors (callers retry: the markers make a retry write nothing twice).
 */
export async function queueMessages(
  runtime: Pick<Runtime, 'store' | 'clock' | 'deliveryQueue'>,
  teamId: string,
  intents: readonly MessageIntent[],
  options: { broadcastId?: string; delivery?: 'preferred' | 'both' } = {},
): Promise<number> {
  const sends: MessageSendMessage[] = [];
  for (const intent of intents) {
    const reach = await reachabilityOf(runtime, teamId, intent.projectId, intent.subscriberId);
    if (!reach) continue;
    const template = await loadMessageTemplate(runtime, teamId, intent.projectId, intent.kind);
    // An address's confirmation goes to that address only, never through a bot.
    const channels =
      intent.kind === 'join_confirmation'
        ? chooseChannels({ ...reach, bot: null }, 'preferred')
        : chooseChannels(reach, options.delivery ?? template.delivery);
    const nowMs = runtime.clock.nowMs();
    const now = isoTime(nowMs);
    const skippedReason =
      channels.length === 0
        ? 'The subscriber has no e-mail address and cannot get a message from the project\u2019s bot.'
        : reach.optedOut && !isEssentialMessage(intent.kind)
          ? 'The subscriber opted out of messages of this kind.'
          : null;
    const made = (channels.length ? channels : (['email'] as const)).map((channel) => ({
      id: newMessageId(nowMs),
      project_id: intent.projectId,
      subscriber_id: intent.subscriberId,
      subscription_id: intent.subscriptionId,
      broadcast_id: options.broadcastId ?? null,
      kind: intent.kind,
      channel,
      occasion: intent.occasion,
      grace_day: intent.graceDay,
      status: skippedReason ? 'skipped' : 'queued',
      attempts: 0,
      failure_reason: skippedReason,
      next_attempt_at: skippedReason ? null : now,
      sent_at: null,
      created_at: now,
      updated_at: now,
    }));
    const written = await messageStore.insertOccasion(runtime.store, teamId, occasionIdentity(intent), made);
    if (!written || skippedReason) continue;
    for (const message of made) {
      sends.push({
        kind: 'message_send',
        team_id: teamId,
        project_id: message.project_id,
        subscriber_id: message.subscriber_id,
        message_id: message.id,
        attempt: 1,
      });
    }
  }
  if (sends.length) await runtime.deliveryQueue.send(sends, 0);
  return sends.length;
}
