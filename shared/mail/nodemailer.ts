/**
 * The adapters of the `MailSender` port (DESIGN D32), both on nodemailer: SMTP (`SMTP_URL`: the embedded MailDev of
 * `npm start`, or any server) and SES v2 (on AWS, `MAIL_FROM`). Failures become {@link MailSendError}s; no error or log
 * line carries a message's subject or body.
 */
import { createTransport, type NodemailerError } from 'nodemailer';
import { sesMailSender } from '../aws/ses-mail.js';
import { ConfigurationError, mailConfig } from '../config.js';
import type { Runtime } from '../runtime.js';
import { messageOf } from './message.js';
import { MailSendError, type MailSender } from './port.js';

/** The sender address of SMTP mail when `MAIL_FROM` is not set (local runs: MailDev accepts any). */
export const DEFAULT_SMTP_MAIL_FROM = 'members@localhost';

/** Waits of the SMTP transport, in milliseconds: well inside the 30-second budget of the function that sends. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };

/**
 * Sends through the SMTP server at `smtpUrl` (`smtp://user:password@host:port`, `smtps://...` for implicit TLS;
 * STARTTLS when the server offers it) from the address `from`. A 4xx reply (and 503) or a connection failure throws a
 * `transient` {@link MailSendError}, any other 5xx reply a `rejected` one. Resolves with the message's `Message-ID`.
 */
export function smtpMailSender(smtpUrl: string, from: string): MailSender {
  const transport = createTransport({ url: smtpUrl, ...SMTP_TIMEOUTS });
  return {
    async send(mail) {
      try {
        const info = await transport.sendMail(messageOf(mail, from));
        return { messageId: info.messageId };
      } catch (error) {
        throw smtpFailure(error as NodemailerError);
      }
    },
  };
}

/** The {@link MailSendError} of an SMTP failure: by the reply's class when the server answered, else transient. */
function smtpFailure(error: NodemailerError): MailSendError {
  if (error.responseCode !== undefined) {
    // nodemailer sets `permanent` from the reply class (RFC 5321: 5yz permanent except 503, 4yz transient).
    const kind = error.permanent ? 'rejected' : 'transient';
    return new MailSendError(
      kind,
      `The SMTP server answered ${error.command ?? 'the message'} with: ${error.response}`,
    );
  }
  // No reply and an envelope error: no usable recipient address, which no retry fixes.
  if (error.code === 'EENVELOPE')
    return new MailSendError('rejected', `The SMTP envelope was refused: ${error.message}`);
  const code = error.originalCode ?? error.code ?? error.name;
  return new MailSendError('transient', `Could not reach the SMTP server (${code}): ${error.message}`);
}

/**
 * The sender the environment configures (`shared/config.ts`): `SMTP_URL` → SMTP (from `MAIL_FROM`, default
 * {@link DEFAULT_SMTP_MAIL_FROM}); else `MAIL_FROM` → SES; neither → a sender whose `send` rejects with a
 * `ConfigurationError` naming both. Throws `ConfigurationError` at once for a malformed value.
 */
export function mailSenderFromEnvironment(env: NodeJS.ProcessEnv = process.env): MailSender {
  const { smtpUrl, mailFrom } = mailConfig(env);
  if (smtpUrl) return smtpMailSender(smtpUrl, mailFrom ?? DEFAULT_SMTP_MAIL_FROM);
  if (mailFrom) return sesMailSender(mailFrom);
  return {
    async send() {
      throw new ConfigurationError(
        'E-mail is not configured: set MAIL_FROM (a verified SES sender; the stack sets it from the `mailFrom` context) or SMTP_URL.',
      );
    },
  };
}

/** The sender built from the environment, once per process. */
let fromEnvironment: MailSender | null = null;

/** The runtime's mail sender, or else the environment's ({@link mailSenderFromEnvironment}, built once per process). */
export function mailSenderOf(runtime: Pick<Runtime, 'mail'>): MailSender {
  return runtime.mail ?? (fromEnvironment ??= mailSenderFromEnvironment());
}
