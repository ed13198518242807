import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { createTransport } from 'nodemailer';
import { messageOf } from '../mail/message.js';
import { MailSendError, type MailSender } from '../mail/port.js';

/**
 * SES v2 error names that are a permanent refusal (never retried): the message, the sender identity or the account is
 * refused until someone changes something.
 */
const SES_REJECTIONS = new Set([
  'MessageRejected',
  'MailFromDomainNotVerifiedException',
  'AccountSuspendedException',
  'SendingPausedException',
  'BadRequestException',
  'NotFoundException',
]);

/**
 * Sends through Amazon SES v2 (`SendEmail` with the raw MIME message) from the verified address `from`, with the
 * function's credentials and region. Throttling, quotas, 5xx and network failures throw a `transient`
 * {@link MailSendError}; `MessageRejected`, an unverified or suspended sender and other 4xx refusals a `rejected` one.
 * Resolves with SES's message id (the one its bounce and complaint notifications name).
 */
export function sesMailSender(from: string): MailSender {
  const transport = createTransport({ SES: { sesClient: new SESv2Client({}), SendEmailCommand } });
  return {
    async send(mail) {
      try {
        const info = await transport.sendMail(messageOf(mail, from));
        return { messageId: info.response };
      } catch (error) {
        throw sesFailure(error as SesError);
      }
    },
  };
}

/** What an AWS SDK v3 service error carries (network errors carry no metadata). */
interface SesError extends Error {
  $metadata?: { httpStatusCode?: number };
  $retryable?: { throttling?: boolean };
  $response?: { headers?: Record<string, string | undefined> };
}

/** The {@link MailSendError} of an SES failure, with the `Retry-After` seconds when the answer carried them. */
function sesFailure(error: SesError): MailSendError {
  const status = error.$metadata?.httpStatusCode;
  const transient =
    !SES_REJECTIONS.has(error.name) &&
    (error.$retryable !== undefined || status === undefined || status === 429 || status >= 500 || isQuota(error));
  const message = `SES refused the message (${error.name}${status ? `, HTTP ${status}` : ''}): ${error.message}`;
  if (!transient) return new MailSendError('rejected', message);
  const retryAfter = Number(error.$response?.headers?.['retry-after']);
  return new MailSendError('transient', message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null);
}

/** SES's sending-rate and daily-quota refusals (HTTP 4xx, yet over once the window passes). */
const isQuota = (error: SesError): boolean =>
  error.name === 'TooManyRequestsException' || error.name === 'LimitExceededException';
