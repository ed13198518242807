/**
 * A capturing SMTP server for tests of the e-mail channel (DESIGN D32): `smtp-server` on 127.0.0.1 (a free port, no
 * TLS, authentication optional) that parses every message it accepts with `mailparser` and keeps it, and can refuse the
 * next recipients with a chosen reply code (`failNextRecipients`). `close()` stops it.
 */
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { expect, vi } from 'vitest';

/** One message the server accepted, as parsed. */
interface CapturedMail {
  /** The envelope's recipients (`RCPT TO`). */
  envelopeTo: string[];
  subject: string;
  /** The `From` header's text, e.g. `members@example.com`. */
  from: string;
  /** The `To` header's text. */
  to: string;
  text: string;
  /** The HTML part, or undefined when there is none. */
  html: string | undefined;
  /** Every header by lower-case name, its value unfolded as sent (the last one when a name repeats). */
  headers: Record<string, string>;
}

/** A running capturing SMTP server. */
export interface CapturingSmtpServer {
  /** `smtp://127.0.0.1:<port>`: what `SMTP_URL` or `smtpMailSender` takes. */
  url: string;
  port: number;
  /** Every accepted message, in order of arrival. */
  messages: CapturedMail[];
  /** Resolves with the first message matching `predicate` (polling with `vi.waitFor`, 10 s at most). */
  waitForMail(predicate?: (mail: CapturedMail) => boolean): Promise<CapturedMail>;
  /** Refuses the next `count` recipients (`RCPT TO`) with reply `code` (e.g. 550 rejected, 451 try later). */
  failNextRecipients(count: number, code: number, message?: string): void;
  close(): Promise<void>;
}

/** Starts a {@link CapturingSmtpServer} on 127.0.0.1 (a free port). */
export async function startCapturingSmtpServer(): Promise<CapturingSmtpServer> {
  const messages: CapturedMail[] = [];
  let failure: { count: number; code: number; message: string } | null = null;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      if (failure && failure.count > 0) {
        failure.count--;
        return callback(Object.assign(new Error(failure.message), { responseCode: failure.code }));
      }
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream).then(
        (parsed) => {
          const headers: Record<string, string> = {};
          for (const { key, line } of parsed.headerLines)
            headers[key] = line
              .slice(line.indexOf(':') + 1)
              .replace(/\r?\n[ \t]+/g, ' ')
              .trim();
          messages.push({
            envelopeTo: session.envelope.rcptTo.map((recipient) => recipient.address),
            subject: parsed.subject ?? '',
            from: parsed.from?.text ?? '',
            to: [parsed.to ?? []]
              .flat()
              .map((address) => address.text)
              .join(', '),
            text: parsed.text ?? '',
            html: parsed.html === false ? undefined : parsed.html,
            headers,
          });
          callback();
        },
        (error: Error) => callback(error),
      );
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    async waitForMail(predicate = () => true) {
      return vi.waitFor(
        () => {
          const found = messages.find(predicate);
          expect(found, 'no matching mail arrived').toBeDefined();
          return found!;
        },
        { timeout: 10_000, interval: 20 },
      );
    },
    failNextRecipients(count, code, message = 'Refused by the test') {
      failure = { count, code, message };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
