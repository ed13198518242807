/**
 * Discord DMs (DESIGN D32) against DynamoDB Local and the loopback Discord API fake: a subscriber with a Discord
 * account on a Discord project gets the welcome as a DM (a DM channel, then the message, no mentions parsed); Discord's
 * refusal of the DM (403, 50007) is recorded as a block and the next message goes by e-mail; `/stop` opts out of
 * non-essential messages and `/start` opts back in.
 */
import { describe, expect, it } from 'vitest';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { OutgoingMail } from '../../shared/mail/port.js';
import {
  USER_ID,
  call,
  clock,
  connectAndLink,
  discord,
  interact,
  projectId,
  runtime,
  useDiscordFixture,
} from '../support/fixtures/discord.js';
import { createMonthlyPlan } from '../support/monthly-plan.js';

useDiscordFixture();

/** Fans out the outbox, then runs every queued message-send once. */
async function send(): Promise<void> {
  await relayOutbox(runtime, clock.nowMs());
  for (const { message } of runtime.messageSends.splice(0)) await processJobMessage(runtime, message);
}

/**
 * Links the bot, connects the manual provider, and subscribes Ada (Discord user {@link USER_ID}, consenting, with
 * `contact`) to a monthly plan; returns the subscription.
 */
async function subscribeAda(contact: { email?: string }): Promise<{ id: string; subscriber_id: string }> {
  await connectAndLink();
  await call('PUT', `/v1/projects/${projectId}/payment-provider`, { provider: 'manual' });
  const plan = await createMonthlyPlan(call, projectId);
  const subscriber = (
    await call('POST', `/v1/projects/${projectId}/subscribers`, {
      display_name: 'Ada',
      platform_user_id: USER_ID,
      ...contact,
      consent: true,
    })
  ).json;
  return (
    await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriber.id, plan_id: plan.id })
  ).json;
}

describe('Discord DMs', () => {
  it('welcomes a Discord member by DM, and falls back to e-mail once Discord refuses their DMs', async () => {
    const mails: OutgoingMail[] = [];
    runtime.mail = {
      async send(mail) {
        mails.push(mail);
        return { messageId: '<1@test>' };
      },
    };
    const subscription = await subscribeAda({ email: 'ada@example.test' });
    await send();
    const [channel] = discord.callsOf('POST /users/@me/channels');
    expect(channel.body).toEqual({ recipient_id: USER_ID });
    const [dm] = discord.callsOf('POST /channels/');
    expect(dm.body).toMatchObject({ allowed_mentions: { parse: [] } });
    expect(String((dm.body as { content: string }).content)).toContain(`/portal/${projectId}`);
    expect(mails).toEqual([]);

    discord.failNext('POST /channels/', { status: 403, message: 'Cannot send messages to this user', code: 50007 });
    await call('POST', `/v1/subscriptions/${subscription.id}/pause`, {});
    await send();
    clock.advance(60_000);
    await call('POST', `/v1/subscriptions/${subscription.id}/resume`, {});
    await send();
    const log = await call('GET', `/v1/projects/${projectId}/messages`, undefined, {
      query: { subscriber_id: subscription.subscriber_id },
    });
    expect(
      (log.json.data as { kind: string; channel: string; status: string }[]).map(
        (message) => `${message.kind}:${message.channel}:${message.status}`,
      ),
    ).toEqual(['resumed:email:sent', 'paused:discord:failed', 'welcome:discord:sent']);
    expect(mails.map((mail) => mail.to)).toEqual(['ada@example.test']);
  });

  it('/stop keeps only the essential notices, /start brings them all back; an unknown user is told so', async () => {
    const subscription = await subscribeAda({});
    await send();
    const slash = (name: string, userId = USER_ID, id = `${name}-${userId}`) =>
      interact({ id, type: 2, data: { name, type: 1 }, member: { user: { id: userId, username: 'ada' } } });
    const content = (answer: { body: Record<string, unknown> }) => (answer.body.data as { content: string }).content;

    const stopped = await slash('stop');
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ type: 4, data: { flags: 64 } });
    expect(content(stopped)).toContain('you will only get essential notices');
    await call('POST', `/v1/subscriptions/${subscription.id}/pause`, {});
    await send();
    clock.advance(60_000);
    expect(content(await slash('start'))).toContain('Send /membership to manage it');
    await call('POST', `/v1/subscriptions/${subscription.id}/resume`, {});
    await send();
    const log = await call('GET', `/v1/projects/${projectId}/messages`, undefined, {
      query: { subscriber_id: subscription.subscriber_id },
    });
    expect(
      (log.json.data as { kind: string; status: string; failure_reason: string | null }[]).map(
        (message) => `${message.kind}:${message.status}`,
      ),
    ).toEqual(['resumed:sent', 'paused:skipped', 'welcome:sent']);
    expect(content(await slash('stop', '700000000000000999'))).toBe(
      'No membership was found for your Discord account here, so there is nothing to stop.',
    );
  });
});
