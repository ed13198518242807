/**
 * The e-mail adapters (DESIGN D32): the SMTP sender against a capturing loopback SMTP server (what arrives, and how
 * refusals and a refused connection map to `MailSendError`), the SES v2 sender against a mocked `SESv2Client` (the raw
 * MIME it sends, and how SES errors map), and the choice `mailSenderFromEnvironment` makes.
 */
import { createServer } from 'node:net';
import {
  MessageRejected,
  SendEmailCommand,
  SESv2Client,
  TooManyRequestsException,
  MailFromDomainNotVerifiedException,
  InternalServiceErrorException,
} from '@aws-sdk/client-sesv2';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigurationError } from '../../shared/config.js';
import { MailSendError, type OutgoingMail } from '../../shared/mail/port.js';
import {
  DEFAULT_SMTP_MAIL_FROM,
  mailSenderFromEnvironment,
  mailSenderOf,
  smtpMailSender,
} from '../../shared/mail/nodemailer.js';
import { startCapturingSmtpServer, type CapturingSmtpServer } from '../support/mail.js';
import { sesMailSender } from '../../shared/aws/ses-mail.js';

const UNSUBSCRIBE_URL = 'https://members.example.com/unsubscribe/abc123';
const mail = (to: string): OutgoingMail => ({
  to,
  subject: 'Your trial ends in 3 days — Café club',
  text: 'Hello Ana,\nyour trial ends on 2 March.',
  html: '<p>Hello Ana,<br>your trial ends on <strong>2 March</strong>.</p>',
  headers: { 'List-Unsubscribe': `<${UNSUBSCRIBE_URL}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
});

/** The rejection of `promise`, which must reject. */
async function failureOf(promise: Promise<unknown>): Promise<MailSendError> {
  const error = await promise.then(
    () => expect.fail('expected the send to fail'),
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(MailSendError);
  return error as MailSendError;
}

describe('SMTP sender', () => {
  let smtp: CapturingSmtpServer;
  beforeAll(async () => {
    smtp = await startCapturingSmtpServer();
  });
  afterAll(async () => {
    await smtp.close();
  });

  it('delivers subject, text, HTML and the one-click unsubscribe headers intact', async () => {
    const sender = smtpMailSender(smtp.url, 'members@example.com');
    const { messageId } = await sender.send(mail('ana@example.org'));
    const arrived = await smtp.waitForMail((message) => message.envelopeTo.includes('ana@example.org'));
    expect(arrived).toMatchObject({
      subject: 'Your trial ends in 3 days — Café club',
      from: 'members@example.com',
      to: 'ana@example.org',
      text: 'Hello Ana,\nyour trial ends on 2 March.',
      html: '<p>Hello Ana,<br>your trial ends on <strong>2 March</strong>.</p>',
    });
    expect(arrived.headers['list-unsubscribe']).toBe(`<${UNSUBSCRIBE_URL}>`);
    expect(arrived.headers['list-unsubscribe-post']).toBe('List-Unsubscribe=One-Click');
    expect(arrived.headers['message-id']).toBe(messageId);
  });

  it('maps a 550 reply to a rejected failure and a 451 reply to a transient one, without the body', async () => {
    const sender = smtpMailSender(smtp.url, 'members@example.com');
    smtp.failNextRecipients(1, 550, 'No such user');
    const rejected = await failureOf(sender.send(mail('gone@example.org')));
    expect(rejected.kind).toBe('rejected');
    expect(rejected.message).toContain('550');
    smtp.failNextRecipients(1, 451, 'Greylisted, try again later');
    const transient = await failureOf(sender.send(mail('later@example.org')));
    expect(transient).toMatchObject({ kind: 'transient', retryAfterSeconds: null });
    for (const failure of [rejected, transient]) {
      expect(failure.message).not.toContain('Hello Ana');
      expect(failure.message).not.toContain('Café club');
    }
    expect(smtp.messages.filter((message) => message.envelopeTo.some((to) => /gone|later/.test(to)))).toEqual([]);
  });

  it('maps a refused connection to a transient failure', async () => {
    // A port that was free a moment ago: nothing listens there, so the connection is refused at once.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const failure = await failureOf(
      smtpMailSender(`smtp://127.0.0.1:${port}`, 'members@example.com').send(mail('a@b.c')),
    );
    expect(failure.kind).toBe('transient');
    expect(failure.message).toContain('ECONNREFUSED');
  });

  it('is what the environment configures with SMTP_URL, from MAIL_FROM or the local default sender', async () => {
    await mailSenderFromEnvironment({ SMTP_URL: smtp.url }).send(mail('default-from@example.org'));
    expect((await smtp.waitForMail((message) => message.to === 'default-from@example.org')).from).toBe(
      DEFAULT_SMTP_MAIL_FROM,
    );
    await mailSenderFromEnvironment({ SMTP_URL: smtp.url, MAIL_FROM: 'club@example.com' }).send(
      mail('set-from@example.org'),
    );
    expect((await smtp.waitForMail((message) => message.to === 'set-from@example.org')).from).toBe('club@example.com');
  });
});

describe('SES sender', () => {
  const ses = mockClient(SESv2Client);
  afterEach(() => ses.reset());
  afterAll(() => ses.restore());

  it('sends the raw MIME message with its headers from the verified sender, and resolves with the SES message id', async () => {
    ses.on(SendEmailCommand).resolves({ MessageId: '0100018c-abc' });
    const { messageId } = await sesMailSender('members@example.com').send(mail('ana@example.org'));
    expect(messageId).toBe('0100018c-abc');
    const [call] = ses.commandCalls(SendEmailCommand);
    const input = call.args[0].input;
    expect(input).toMatchObject({
      FromEmailAddress: 'members@example.com',
      Destination: { ToAddresses: ['ana@example.org'] },
    });
    const raw = Buffer.from(input.Content!.Raw!.Data!).toString('utf8');
    expect(raw).toContain(`List-Unsubscribe: <${UNSUBSCRIBE_URL}>`);
    expect(raw).toContain('List-Unsubscribe-Post: List-Unsubscribe=One-Click');
    expect(raw).toMatch(/^Subject: /m);
    expect(raw).toContain('Content-Type: text/html');
  });

  it('maps MessageRejected and an unverified sender to rejected, throttling and 5xx to transient', async () => {
    const metadata = (httpStatusCode: number) => ({ $metadata: { httpStatusCode } });
    const sender = sesMailSender('members@example.com');
    const cases = [
      [new MessageRejected({ message: 'Email address is not verified.', ...metadata(400) }), 'rejected'],
      [new MailFromDomainNotVerifiedException({ message: 'Not verified', ...metadata(400) }), 'rejected'],
      [new TooManyRequestsException({ message: 'Maximum sending rate exceeded.', ...metadata(429) }), 'transient'],
      [new InternalServiceErrorException({ message: 'Internal error', ...metadata(500) }), 'transient'],
    ] as const;
    for (const [error, kind] of cases) {
      ses.reset();
      ses.on(SendEmailCommand).rejects(error);
      const failure = await failureOf(sender.send(mail('ana@example.org')));
      expect(failure.kind, error.name).toBe(kind);
      expect(failure.message).toContain(error.name);
      expect(failure.message).not.toContain('Hello Ana');
    }
  });
});

describe('mailSenderFromEnvironment', () => {
  it('fails at first use, not when built, when neither MAIL_FROM nor SMTP_URL is set', async () => {
    const sender = mailSenderFromEnvironment({});
    await expect(sender.send(mail('ana@example.org'))).rejects.toThrow(ConfigurationError);
    await expect(sender.send(mail('ana@example.org'))).rejects.toThrow(/MAIL_FROM.*SMTP_URL/);
  });

  it('refuses a malformed SMTP_URL or MAIL_FROM, naming it', () => {
    expect(() => mailSenderFromEnvironment({ SMTP_URL: 'http://127.0.0.1:25' })).toThrow(/SMTP_URL/);
    expect(() => mailSenderFromEnvironment({ MAIL_FROM: 'not an address' })).toThrow(/MAIL_FROM/);
  });

  it('prefers the runtime’s own sender', () => {
    const own = { send: async () => ({ messageId: 'own' }) };
    expect(mailSenderOf({ mail: own })).toBe(own);
  });
});
