/**
 * The local service's e-mail (DESIGN D32): with an inbox asked for (`npm start` without `SMTP_URL`), the runtime's
 * `mail` sends over SMTP to an embedded MailDev, whose web interface lists the message with its headers; stopping the
 * service stops the inbox.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalService } from '../../shared/local/service.js';
import { startTestService } from '../support/local-service.js';

let service: LocalService;
let stopped = false;

beforeAll(async () => {
  service = await startTestService({ inbox: { smtpPort: 0, webPort: 0 }, mailFrom: 'club@example.com' });
});

afterAll(async () => {
  if (!stopped) await service?.stop();
});

/** True when something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('the local inbox', () => {
  it('receives what the runtime sends, headers included, and stops with the service', async () => {
    expect(service.inboxUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    await service.runtime.mail!.send({
      to: 'ana@example.org',
      subject: 'Welcome to the club',
      text: 'Hello Ana',
      html: '<p>Hello Ana</p>',
      headers: { 'List-Unsubscribe': '<https://example.com/unsubscribe/1>' },
    });
    const email = await vi.waitFor(
      async () => {
        const [first] = (await (await fetch(new URL('api/email', service.inboxUrl!))).json()) as any[];
        expect(first).toBeDefined();
        return first;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(email).toMatchObject({
      subject: 'Welcome to the club',
      from: [{ address: 'club@example.com' }],
      to: [{ address: 'ana@example.org' }],
      text: expect.stringContaining('Hello Ana'),
    });
    // MailDev's parsed headers omit the List-* family: its raw source shows what arrived.
    const source = await (await fetch(new URL(`api/email/${email.id}/source`, service.inboxUrl!))).text();
    expect(source).toContain('List-Unsubscribe: <https://example.com/unsubscribe/1>');

    const inboxPort = Number(new URL(service.inboxUrl!).port);
    stopped = true;
    await service.stop();
    expect(await accepts(inboxPort)).toBe(false);
  });
});
