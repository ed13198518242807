import { isEssentialMessage, type MessageChannel, type MessageKind } from '../../catalogues/message-kinds.js';
import { openCredential } from '../../credentials/repository.js';
import { integrationsOf } from '../../integrations.js';
import { MailSendError } from '../../mail/port.js';
import { DISCORD_CREDENTIAL, DiscordCallError, discordSettingsOf, loadDiscordClient } from '../../platforms/discord.js';
import { TELEGRAM_CREDENTIAL, TelegramCallError, sendTelegramMessage } from '../../platforms/telegram.js';
import type { Runtime } from '../../runtime.js';
import { consumeRateLimit } from '../../limits/rate-limit.js';
import { ProblemError } from '../../errors.js';
import { ConfigurationError } from '../../config.js';

/**
 * Sending one rendered message through its channel (DESIGN D32), and what a failure means: `transient` (retried after a
 * wait: 5xx, 429, no answer), `throttled` (the bot is at the service's own rate for its platform: nothing was sent, put
 * off without counting as an attempt), `blocked` (the subscriber blocked the bot or the DM is refused: recorded, never
 * retried), `bounced` (the address was refused for good: recorded, never retried), `unreachable` (no bot any more).
 */

/** How a send ended, when it did not succeed. */
export type SendFailure =
  | { kind: 'transient'; reason: string; retryAfterSeconds: number | null }
  | { kind: 'throttled'; reason: string; retryAfterSeconds: number }
  | { kind: 'blocked' | 'bounced' | 'unreachable'; reason: string };

/** What a channel sends: e-mail needs the address, subject and RFC 8058 unsubscribe link; bots the platform user. */
export interface ChannelSend {
  teamId: string;
  projectId: string;
  kind: MessageKind;
  channel: MessageChannel;
  /** The e-mail address, or the platform user id for a bot DM. */
  recipient: string;
  subject: string | null;
  text: string;
  html: string | null;
  /** One-click unsubscribe URL (RFC 8058); e-mail of non-essential kinds only. */
  unsubscribeUrl: string | null;
}

/**
 * Sends one message. Resolves null on success, or the {@link SendFailure}; throws only on a programming or store
 * error. `mail` is the runtime's `MailSender` (none: e-mail is `unreachable`).
 */
export async function sendThroughChannel(
  runtime: Runtime,
  mail: Runtime['mail'],
  send: ChannelSend,
): Promise<SendFailure | null> {
  if (send.channel === 'email') {
    if (!mail) return { kind: 'unreachable', reason: 'No mail sender is configured (set SMTP_URL or MAIL_FROM).' };
    const headers: Record<string, string> = {};
    if (send.unsubscribeUrl && !isEssentialMessage(send.kind)) {
      headers['List-Unsubscribe'] = `<${send.unsubscribeUrl}>`;
      headers['List-Unsubscribe-Post'] = 'List-Unsubscribe=One-Click';
    }
    try {
      await mail.send({
        to: send.recipient,
        subject: send.subject ?? '',
        text: send.text,
        ...(send.html ? { html: send.html } : {}),
        headers,
      });
      return null;
    } catch (error) {
      if (error instanceof ConfigurationError) return { kind: 'unreachable', reason: error.message };
      if (!(error instanceof MailSendError)) throw error;
      return error.kind === 'rejected'
        ? { kind: 'bounced', reason: 'The address was refused by the mail server.' }
        : {
            kind: 'transient',
            reason: 'The mail server did not take the message.',
            retryAfterSeconds: error.retryAfterSeconds,
          };
    }
  }
  const settings = integrationsOf(runtime);
  const credential = await openCredential(
    runtime.store,
    settings.keyEncryptionKey,
    send.projectId,
    send.channel === 'telegram' ? TELEGRAM_CREDENTIAL : DISCORD_CREDENTIAL,
    send.teamId,
  );
  const token = credential?.secrets.bot_token;
  if (!token) return { kind: 'unreachable', reason: 'The project has no bot connected any more.' };
  if (send.channel === 'telegram') {
    try {
      await consumeRateLimit(runtime.store, runtime.clock, 'telegram-messages', send.projectId);
    } catch (error) {
      if (error instanceof ProblemError && error.code === 'RATE_LIMITED')
        return { kind: 'throttled', reason: 'The bot is at its message rate.', retryAfterSeconds: 1 };
      throw error;
    }
    try {
      await sendTelegramMessage(settings, token, Number(send.recipient), send.text);
      return null;
    } catch (error) {
      if (!(error instanceof TelegramCallError)) throw error;
      if (error.errorCode === 403) return { kind: 'blocked', reason: 'The subscriber blocked the bot.' };
      if (error.errorCode === 400) return { kind: 'unreachable', reason: 'Telegram does not know this chat.' };
      return { kind: 'transient', reason: 'Telegram did not take the message.', retryAfterSeconds: null };
    }
  }
  try {
    const client = await loadDiscordClient();
    await client.sendDirectMessage(discordSettingsOf(settings), token, send.recipient, send.text);
    return null;
  } catch (error) {
    if (!(error instanceof DiscordCallError)) throw error;
    if (error.status === 403) return { kind: 'blocked', reason: 'Discord refused a DM to this subscriber.' };
    if (error.status !== null && error.status < 500)
      return { kind: 'unreachable', reason: 'Discord does not know this user.' };
    return { kind: 'transient', reason: 'Discord did not take the message.', retryAfterSeconds: null };
  }
}
