import { isEssentialMessage, type MessageChannel, type MessageKind } from '../../catalogues/message-kinds.js';
import { isoTime } from '../../clock.js';
import { integrationsOf } from '../../integrations.js';
import { mailSenderOf } from '../../mail/nodemailer.js';
import type { MessageSendMessage, Runtime } from '../../runtime.js';
import { messageStore, type MessageAddress } from '../../store/messages.js';
import { planStore } from '../../store/plans.js';
import { projectStore } from '../../store/projects.js';
import { readSubscription } from '../../store/subscriptions/reads.js';
import { MAX_QUEUE_DELAY_SECONDS } from '../webhook-deliveries/policy.js';
import { renderMessage, type MessageContext } from '../message-templates/render.js';
import { loadMessageTemplate } from '../message-templates/templates.js';
import { toPlan } from '../plans/repository.js';
import { createPortalLink, SIGN_IN_LINK_LIFETIME_MS } from '../portal-sessions/links.js';
import { toProject } from '../projects/repository.js';
import { toSubscriber } from '../subscribers/repository.js';
import { toSubscription } from '../subscriptions/records.js';
import { nextDueTrigger } from '../subscriptions/lifecycle.js';
import { createConfirmationLink } from '../portal-sessions/confirmations.js';
import { paymentRecoveryUrl } from './recovery.js';
import { reachabilityOf } from './creation.js';
import { sendThroughChannel, type SendFailure } from './channels.js';
import { createUnsubscribeLink } from './unsubscribe.js';
import { broadcastTexts, countBroadcastOutcome } from './broadcast-worker.js';

/**
 * The message worker (DESIGN D32): one queue message → one attempt of one message. The attempt is taken first
 * (`queued` → `sending`, conditional on the attempt number), so a repeated or stale queue message sends nothing, and a
 * message is never sent twice; a transient failure queues the next attempt, a block or a bounce is recorded.
 */

/** How long to wait before attempt N+1 after a transient failure of attempt N (seconds), N = 1 …; then `failed`. */
const RETRY_WAITS_SECONDS = [10, 60, 300, 900, 900] as const;

/** What one queue message came to, for logs and tests. */
export type MessageSendOutcome = 'sent' | 'retry_scheduled' | 'deferred' | 'failed' | 'message_skipped' | 'skipped';

/**
 * How long a send put off by the service's own rate waits (seconds): the limiter's wait plus a random share of a
 * window that doubles with each deferral up to 30 s, so a burst spreads out instead of returning all at once.
 */
export function deferralWaitSeconds(retryAfterSeconds: number, deferrals: number, random = Math.random()): number {
  return retryAfterSeconds + random * Math.min(30, 2 ** Math.min(deferrals, 5));
}

/** The portal of a project (sign-in page), under the service's public base URL. */
function portalUrl(runtime: Runtime, projectId: string): string {
  const base = integrationsOf(runtime).publicBaseUrl ?? '';
  return `${base}/portal/${projectId}`;
}

/** Handles one `message_send` queue message (see the module note). Throws only on store errors (the queue retries). */
export async function processMessageSend(runtime: Runtime, queued: MessageSendMessage): Promise<MessageSendOutcome> {
  const address: MessageAddress = {
    teamId: queued.team_id,
    projectId: queued.project_id,
    subscriberId: queued.subscriber_id,
    messageId: queued.message_id,
  };
  const nowIso = () => isoTime(runtime.clock.nowMs());
  const message = await messageStore.begin(runtime.store, address, queued.attempt, nowIso());
  if (!message) return 'skipped';
  const kind = message.kind as MessageKind;
  const channel = message.channel as MessageChannel;
  const finish = async (
    status: string,
    failureReason: string | null,
    extra: { nextAttemptAt?: string; sentAt?: string } = {},
  ) => {
    if (await messageStore.finish(runtime.store, address, { status, nowIso: nowIso(), failureReason, ...extra }))
      await countBroadcastOutcome(runtime, message, status);
  };

  const reach = await reachabilityOf(runtime, address.teamId, address.projectId, address.subscriberId);
  const recipient =
    channel === 'email'
      ? reach?.email
      : typeof reach?.subscriber.platform_user_id === 'string'
        ? reach.subscriber.platform_user_id
        : null;
  if (!reach || !recipient || (channel !== 'email' && reach.bot !== channel)) {
    await finish('skipped', 'The subscriber cannot be reached through this channel any more.');
    return 'message_skipped';
  }
  if (reach.optedOut && !isEssentialMessage(kind)) {
    await finish('skipped', 'The subscriber opted out of messages of this kind.');
    return 'message_skipped';
  }
  const context = await messageContext(runtime, address, message, reach.subscriber);
  if (!context || (kind === 'join_confirmation' && !context.links.confirm)) {
    await finish(
      'skipped',
      context ? 'The join no longer waits for a confirmation.' : 'The project or subscription is gone.',
    );
    return 'message_skipped';
  }
  const template = await loadMessageTemplate(runtime, address.teamId, address.projectId, kind);
  const rendered = renderMessage(template, channel === 'email' ? 'email' : 'bot', context);
  const failure: SendFailure | null = await sendThroughChannel(runtime, mailSenderOf(runtime), {
    teamId: address.teamId,
    projectId: address.projectId,
    kind,
    channel,
    recipient,
    subject: rendered.subject,
    text: rendered.text,
    html: rendered.html,
    unsubscribeUrl: context.links.unsubscribe,
  });
  if (!failure) {
    await finish('sent', null, { sentAt: nowIso() });
    return 'sent';
  }
  if (failure.kind === 'throttled') {
    const deferrals = Number(message.deferrals ?? 0);
    const delaySeconds = deferralWaitSeconds(failure.retryAfterSeconds, deferrals + 1);
    const next = isoTime(runtime.clock.nowMs() + Math.ceil(delaySeconds * 1000));
    if ((await messageStore.defer(runtime.store, address, queued.attempt, next, nowIso())) === null) return 'skipped';
    await runtime.deliveryQueue.send([queued], delaySeconds / runtime.timeScale);
    return 'deferred';
  }
  if (failure.kind !== 'transient') {
    const preference =
      failure.kind === 'bounced' ? 'email_bounced_at' : failure.kind === 'blocked' ? 'bot_blocked_at' : null;
    if (preference) await messageStore.setPreference(runtime.store, address, preference, nowIso());
    await finish('failed', failure.reason);
    return 'failed';
  }
  const wait = RETRY_WAITS_SECONDS[queued.attempt - 1];
  if (wait === undefined) {
    await finish('failed', `${failure.reason} Gave up after ${queued.attempt} attempts.`);
    return 'failed';
  }
  const delaySeconds = Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(wait, failure.retryAfterSeconds ?? 0));
  await finish('queued', failure.reason, { nextAttemptAt: isoTime(runtime.clock.nowMs() + delaySeconds * 1000) });
  await runtime.deliveryQueue.send([{ ...queued, attempt: queued.attempt + 1 }], delaySeconds / runtime.timeScale);
  return 'retry_scheduled';
}

/**
 * The rendering context of a message: its project, subscriber, subscription and plan, its links and, for a broadcast,
 * its subject and body. Null when gone.
 */
async function messageContext(
  runtime: Runtime,
  address: MessageAddress,
  message: Record<string, unknown>,
  subscriberItem: Record<string, unknown>,
): Promise<MessageContext | null> {
  const projectItem = await projectStore.read(runtime.store, address.teamId, address.projectId);
  if (!projectItem) return null;
  const subscriptionItem =
    typeof message.subscription_id === 'string'
      ? await readSubscription(runtime.store, address.teamId, message.subscription_id)
      : undefined;
  const subscription = subscriptionItem ? toSubscription(subscriptionItem) : null;
  const planItem = subscription ? await planStore.read(runtime.store, address.teamId, subscription.plan_id) : undefined;
  const kind = message.kind as MessageKind;
  const portal = portalUrl(runtime, address.projectId);
  const signIn =
    kind === 'sign_in_link'
      ? (
          await createPortalLink(runtime, address.teamId, address.projectId, address.subscriberId, {
            lifetimeMs: SIGN_IN_LINK_LIFETIME_MS,
          })
        ).url
      : null;
  const due = kind === 'join_confirmation' && subscription ? nextDueTrigger(subscription) : null;
  const confirm =
    due?.trigger === 'incomplete_expired'
      ? await createConfirmationLink(runtime, {
          teamId: address.teamId,
          projectId: address.projectId,
          subscriberId: address.subscriberId,
          subscriptionId: subscription!.id,
          expiresAtMs: due.atMs,
        })
      : null;
  const recovery =
    kind === 'payment_failed' || kind === 'grace_ending'
      ? ((subscriptionItem ? await paymentRecoveryUrl(runtime, address.teamId, subscriptionItem) : null) ?? portal)
      : null;
  const graceEnd = subscription?.grace_period_end ?? null;
  return {
    project: toProject(projectItem),
    subscriber: toSubscriber(subscriberItem, { contact: true }),
    plan: planItem ? toPlan(planItem) : null,
    subscription,
    links: {
      portal,
      recovery,
      sign_in: signIn,
      confirm,
      unsubscribe: isEssentialMessage(kind)
        ? null
        : await createUnsubscribeLink(runtime, address.teamId, address.projectId, address.subscriberId),
      join: `${integrationsOf(runtime).publicBaseUrl ?? ''}/join/${address.projectId}`,
    },
    grace: graceEnd && typeof message.grace_day === 'number' ? { ends_at: graceEnd, day: message.grace_day } : null,
    broadcast: await broadcastTexts(runtime, message),
    gift: null,
  };
}
