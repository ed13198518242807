/**
 * A loopback SMTP server for `npm run bench` that accepts every message and only counts it (no parsing), so that the
 * receiving end costs as little as possible beside the service being measured.
 *
 * @module
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A running {@link startSmtpSink}. */
export interface SmtpSink {
  /** `smtp://127.0.0.1:<port>`. */
  url: string;
  /** Messages accepted so far, by envelope recipient. */
  byRecipient: Map<string, number>;
  /** Messages accepted so far. */
  accepted(): number;
  close(): Promise<void>;
}

/** Starts an {@link SmtpSink} on 127.0.0.1 (a free port). */
export async function startSmtpSink(): Promise<SmtpSink> {
  const byRecipient = new Map<string, number>();
  let accepted = 0;
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        accepted++;
        for (const recipient of session.envelope.rcptTo)
          byRecipient.set(recipient.address, (byRecipient.get(recipient.address) ?? 0) + 1);
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    byRecipient,
    accepted: () => accepted,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
