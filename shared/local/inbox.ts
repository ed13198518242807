/**
 * The local inbox of `npm start` (DESIGN D32): an embedded MailDev (the `maildev` package) that accepts every e-mail
 * the service sends over SMTP and shows it in its web interface. Both servers bind 127.0.0.1.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SMTP_MAIL_FROM, smtpMailSender } from '../mail/nodemailer.js';
import type { MailSender } from '../mail/port.js';

/** Options of {@link startLocalInbox}. */
interface LocalInboxOptions {
  /** SMTP port (`MAILDEV_SMTP_PORT`); 0 picks a free port. */
  smtpPort: number;
  /** Web interface port (`MAILDEV_WEB_PORT`); 0 picks a free port. */
  webPort: number;
  /** Keep the messages in `<dataDirectory>/mail` across restarts (`DATA_DIR`); else in a temporary folder. */
  dataDirectory?: string;
}

/** A running local inbox. */
export interface LocalInbox {
  /** Where the service sends: `smtp://127.0.0.1:<port>`. */
  smtpUrl: string;
  /** The web interface: `http://127.0.0.1:<port>/`. */
  webUrl: string;
  /** Stops both servers (and removes the temporary folder, if it made one). */
  stop(): Promise<void>;
}

/**
 * Starts MailDev on 127.0.0.1 (STARTTLS hidden: the service speaks plain SMTP to it). MailDev keeps each message as an
 * `.eml` file: under `DATA_DIR/mail` when given (restored at the next start), else in a temporary folder removed at
 * stop. Rejects when a port is taken.
 */
async function startLocalInbox(options: LocalInboxOptions): Promise<LocalInbox> {
  // Loaded only here: MailDev (a development dependency) and its web stack stay out of every other path.
  const { MailDev } = await import('maildev');
  const temporary = options.dataDirectory ? null : mkdtempSync(join(tmpdir(), 'membership-inbox-'));
  const maildev = new MailDev({
    smtp: options.smtpPort,
    web: options.webPort,
    ip: '127.0.0.1',
    webIp: '127.0.0.1',
    hideExtensions: ['STARTTLS'],
    mailDirectory: options.dataDirectory ? join(options.dataDirectory, 'mail') : temporary!,
    silent: true,
  });
  const removeTemporary = () => temporary && rmSync(temporary, { recursive: true, force: true });
  let servers;
  try {
    servers = await maildev.start();
  } catch (error) {
    await maildev.stop().catch(() => undefined);
    removeTemporary();
    throw error;
  }
  const web = servers.api!.getAddress()!;
  return {
    smtpUrl: `smtp://127.0.0.1:${servers.smtp.getAddress().port}`,
    webUrl: `http://127.0.0.1:${web.port}/`,
    async stop() {
      await maildev.stop();
      removeTemporary();
    },
  };
}

/** Where the local service's e-mail goes (the mail options of `LocalServiceOptions`). */
export interface LocalMailOptions {
  /** `SMTP_URL`: send there. */
  smtpUrl?: string;
  /** `MAIL_FROM`; default {@link DEFAULT_SMTP_MAIL_FROM}. */
  mailFrom?: string;
  /**
   * Without `smtpUrl`: start an inbox on these ports (`MAILDEV_SMTP_PORT`, `MAILDEV_WEB_PORT`; 0: free) and send there.
   */
  inbox?: { smtpPort: number; webPort: number };
  /** A sender of the caller's own (tests): used as is, nothing started. */
  mail?: MailSender;
  /** `DATA_DIR`: where the inbox keeps its messages. */
  dataDirectory?: string;
}

/**
 * The local service's mail sender (DESIGN D32): `mail` as given, else SMTP to `smtpUrl`, else SMTP to an inbox it
 * starts ({@link startLocalInbox}, returned to stop), else none (`mail` undefined: the environment's at first send).
 */
export async function startLocalMail(
  options: LocalMailOptions,
): Promise<{ mail: MailSender | undefined; inbox: LocalInbox | null }> {
  if (options.mail) return { mail: options.mail, inbox: null };
  const from = options.mailFrom ?? DEFAULT_SMTP_MAIL_FROM;
  if (options.smtpUrl) return { mail: smtpMailSender(options.smtpUrl, from), inbox: null };
  if (!options.inbox) return { mail: undefined, inbox: null };
  const inbox = await startLocalInbox({ ...options.inbox, dataDirectory: options.dataDirectory });
  return { mail: smtpMailSender(inbox.smtpUrl, from), inbox };
}
