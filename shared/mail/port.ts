/**
 * The `MailSender` port (DESIGN D32): sends one e-mail. On AWS nodemailer's SES v2 transport, locally SMTP (an
 * embedded MailDev under `npm start`, or `SMTP_URL`). Adapters live beside this file.
 */

/** One e-mail to send: plain text always, HTML optional; extra headers (e.g. `List-Unsubscribe`, RFC 8058). */
export interface OutgoingMail {
  /** The recipient's address. */
  to: string;
  subject: string;
  text: string;
  html?: string;
  /** Header name → value, added as given. */
  headers?: Record<string, string>;
}

/**
 * Why a send failed: `transient` (network, 4xx SMTP reply, SES throttling or 5xx: retry, after `retryAfterSeconds`
 * when the provider said), `rejected` (a permanent refusal: bad or bounced address, 5xx SMTP reply, SES
 * `MessageRejected`: never retried).
 */
export class MailSendError extends Error {
  constructor(
    readonly kind: 'transient' | 'rejected',
    message: string,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'MailSendError';
  }
}

/** Sends e-mail. `send` resolves with the transport's message id, or throws {@link MailSendError}. */
export interface MailSender {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
}
