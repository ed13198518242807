/**
 * Discord DMs (DESIGN D32) against DynamoDB Local and the loopback Discord API fake: a subscriber with a Discord
 * account on a Discord project gets the welcome as a DM (a DM channel, then the message, no mentions parsed); Discord's
 * refusal of the DM (403, 50007) is recorded as a block and the next message goes by e-mail.
 */
import { describe, expect, it } from 'vitest';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import type { OutgoingMail } from '../../shared/mail/port.js';
import {
  USER_ID,
  call,
  clock,
  connectAndLink,
  discord,
  projectId,
  runtime,
  useDiscordFixture,
} from '../support/fixtures/discord.js';

useDiscordFixture();

/** Fans out the outbox, then runs every queued message-send once. */
async function send(): Promise<void> {
  await relayOutbox(runtime, clock.nowMs());
  for (const { message } of runtime.messageSends.splice(0)) await processDeliveryMessage(runtime, message);
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
    await connectAndLink();
    await call('PUT', `/v1/projects/${projectId}/payment-provider`, { provider: 'manual' });
    const plan = (
      await call('POST', `/v1/projects/${projectId}/plans`, {
        name: 'Monthly',
        amount: 900,
        currency: 'EUR',
        interval: 'month',
      })
    ).json;
    const subscriber = (
      await call('POST', `/v1/projects/${projectId}/subscribers`, {
        display_name: 'Ada',
        platform_user_id: USER_ID,
        email: 'ada@example.test',
        consent: true,
      })
    ).json;
    const subscription = (
      await call('POST', `/v1/projects/${projectId}/subscriptions`, { subscriber_id: subscriber.id, plan_id: plan.id })
    ).json;
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
      query: { subscriber_id: subscriber.id },
    });
    expect(
      (log.json.data as { kind: string; channel: string; status: string }[]).map(
        (message) => `${message.kind}:${message.channel}:${message.status}`,
      ),
    ).toEqual(['resumed:email:sent', 'paused:discord:failed', 'welcome:discord:sent']);
    expect(mails.map((mail) => mail.to)).toEqual(['ada@example.test']);
  });
});
