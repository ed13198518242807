/**
 * "The way back in" and one-click unsubscribe (DESIGN D32) on the public pages, against DynamoDB Local: "E-mail me a
 * sign-in link" on the join page and the signed-out portal answers the same page for every address, queues one
 * `sign_in_link` message per 15 minutes for a subscriber with that address (found by its lookup item, which follows an
 * address change), whose link signs in once, within 15 minutes only; past the per-address limit nothing is sent. The
 * unsubscribe page never opts out on GET; its button (with the CSRF token) and the RFC 8058 one-click POST (no CSRF
 * token, no cookies) do; an unknown token changes nothing; after the opt-out a non-essential message is skipped.
 */
import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { createUnsubscribeLink } from '../../shared/domain/messages/unsubscribe.js';
import { queueMessages } from '../../shared/domain/messages/creation.js';
import { createSubscriber } from '../../shared/domain/subscribers/repository.js';
import { updateSubscriber } from '../../shared/domain/subscribers/changes.js';
import { CreateSubscriberRequest, UpdateSubscriberRequest } from '../../shared/domain/subscribers/schema.js';
import { processJobMessage } from '../../shared/domain/job-worker.js';
import { RATE_LIMITS } from '../../shared/limits/rate-limit.js';
import type { OutgoingMail } from '../../shared/mail/port.js';
import { rest } from '../support/calls.js';
import {
  clock,
  openJoinPage,
  projectId,
  runtime,
  serve,
  team,
  usePublicPagesFixture,
} from '../support/fixtures/public-pages.js';
import { MINUTE_MS } from '../../shared/clock.js';

usePublicPagesFixture();

/** The e-mails the recording mail sender saw. */
let sent: OutgoingMail[];

beforeEach(() => {
  sent = [];
  runtime.mail = {
    async send(mail) {
      sent.push(mail);
      return { messageId: `<${sent.length}@test>` };
    },
  };
});

/** Runs every queued message send once; returns their outcomes. */
async function deliver(): Promise<string[]> {
  const sends = runtime.messageSends.splice(0);
  const outcomes: string[] = [];
  for (const { message } of sends) outcomes.push(String(await processJobMessage(runtime, message)));
  return outcomes;
}

/** A subscriber of the project with `email`. */
const subscriber = (email: string) =>
  createSubscriber(runtime, team.principal, projectId, CreateSubscriberRequest.parse({ email, display_name: 'Ada' }));

/** Posts "E-mail me a sign-in link" from the join page with its CSRF token. */
async function askOnJoinPage(email: string) {
  const { cookies, csrf } = await openJoinPage();
  return serve('POST', `/join/${projectId}/sign-in-link`, {
    cookies,
    form: { csrf_token: csrf, email },
  });
}

/** The messages of a subscriber, as the REST log shows them. */
async function messagesOf(subscriberId: string): Promise<Record<string, unknown>[]> {
  const reply = await rest(runtime, {
    method: 'GET',
    path: `/v1/projects/${projectId}/messages`,
    token: team.token,
    query: { subscriber_id: subscriberId },
  });
  expect(reply.status, reply.text).toBe(200);
  return (reply.json as { data: Record<string, unknown>[] }).data;
}

/** The sign-in path (`/portal/…/sign-in?token=…`) in an e-mail's text. */
function signInPathOf(mail: OutgoingMail): string {
  const match = /\/portal\/[0-9a-f-]{36}\/sign-in\?token=ppl_[A-Za-z0-9]+/.exec(mail.text);
  expect(match, mail.text).not.toBeNull();
  return match![0];
}

describe('E-mail me a sign-in link', () => {
  it('answers the same page for a known and an unknown address, and e-mails the known one a link', async () => {
    const ada = await subscriber('Ada@Example.test');
    const page = await serve('GET', `/join/${projectId}`);
    expect(page.body).toContain(`action="/join/${projectId}/sign-in-link"`);
    expect(page.body).toMatch(/<label for="sign-in-link-email">/);

    const known = await askOnJoinPage('ada@example.TEST');
    const unknown = await askOnJoinPage('nobody@example.test');
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(known.body).toBe(unknown.body);
    expect(known.body).toContain('If that address belongs to a membership here, a sign-in link is on its way');
    expect(known.body).not.toContain('ada@');

    expect(runtime.messageSends).toHaveLength(1);
    expect(runtime.messageSends[0].message).toMatchObject({ subscriber_id: ada.id, kind: 'message_send' });
    expect(await deliver()).toEqual(['sent']);
    expect(sent).toHaveLength(1);
    expect(sent[0].to).toBe('Ada@Example.test');
    expect(sent[0].headers?.['List-Unsubscribe']).toBeUndefined();
    const log = await messagesOf(ada.id);
    expect(log.map((message) => [message.kind, message.status])).toEqual([['sign_in_link', 'sent']]);
    expect(JSON.stringify(log)).not.toMatch(/ppl_/);
  });

  it('sends at most one link per 15 minutes for an address; the link signs in once, and not after 15 minutes', async () => {
    await subscriber('reader@example.test');
    await askOnJoinPage('reader@example.test');
    await askOnJoinPage('reader@example.test');
    expect(runtime.messageSends).toHaveLength(1);
    await deliver();
    const first = signInPathOf(sent[0]);
    const opened = await serve('GET', first);
    expect(opened.statusCode).toBe(303);
    expect(opened.cookies?.join(';')).toContain('portal_session=pps_');
    expect((await serve('GET', first)).statusCode).toBe(404);

    clock.advance(15 * MINUTE_MS);
    await askOnJoinPage('reader@example.test');
    expect(runtime.messageSends).toHaveLength(1);
    await deliver();
    const second = signInPathOf(sent[1]);
    clock.advance(15 * MINUTE_MS);
    expect((await serve('GET', second)).statusCode).toBe(404);
  });

  it('sends nothing past the per-address limit, with the same answer', async () => {
    const { limit } = RATE_LIMITS['sign-in-link-address'];
    const first = await subscriber('busy@example.test');
    const answers: string[] = [];
    for (let index = 0; index < limit; index += 1) answers.push((await askOnJoinPage('busy@example.test')).body ?? '');
    expect(runtime.messageSends.splice(0).map(({ message }) => message)).toMatchObject([{ subscriber_id: first.id }]);

    // A second membership with the address would get a link now, but the address is past its limit.
    const second = await subscriber('busy@example.test');
    answers.push((await askOnJoinPage('busy@example.test')).body ?? '');
    expect(new Set(answers).size).toBe(1);
    expect(runtime.messageSends).toEqual([]);

    clock.advance(15 * MINUTE_MS);
    await askOnJoinPage('busy@example.test');
    expect(runtime.messageSends.map(({ message }) => message.subscriber_id).sort()).toEqual(
      [first.id, second.id].sort(),
    );
  });

  it('works from the signed-out portal with its own CSRF token, and refuses a form without it', async () => {
    const sam = await subscriber('sam@example.test');
    const signedOut = await serve('GET', `/portal/${projectId}`);
    expect(signedOut.statusCode).toBe(401);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(signedOut.body ?? '')![1];
    const cookies = [(signedOut.cookies ?? []).find((cookie) => cookie.startsWith('portal_csrf='))!.split(';')[0]];
    const form = { email: 'sam@example.test' };

    const refused = await serve('POST', `/portal/${projectId}/sign-in-link`, { cookies, form });
    expect(refused.statusCode).toBe(403);
    expect(runtime.messageSends).toEqual([]);

    const asked = await serve('POST', `/portal/${projectId}/sign-in-link`, {
      cookies,
      form: { ...form, csrf_token: csrf },
    });
    expect(asked.statusCode).toBe(200);
    expect(runtime.messageSends.map(({ message }) => message)).toMatchObject([{ subscriber_id: sam.id }]);
    const elsewhere = await serve('POST', `/portal/${randomUUID()}/sign-in-link`, {
      cookies,
      form: { ...form, csrf_token: csrf },
    });
    expect(elsewhere.statusCode).toBe(200);
    expect(elsewhere.body).toBe(asked.body);
  });

  it('follows a changed address: the old one finds nobody, the new one the subscriber', async () => {
    const kim = await subscriber('old@example.test');
    await updateSubscriber(
      runtime,
      team.principal,
      kim.id,
      UpdateSubscriberRequest.parse({ email: 'new@example.test' }),
    );
    await askOnJoinPage('old@example.test');
    expect(runtime.messageSends).toEqual([]);
    await askOnJoinPage('new@example.test');
    expect(runtime.messageSends.map(({ message }) => message)).toMatchObject([{ subscriber_id: kim.id }]);
  });
});

describe('the unsubscribe page', () => {
  /** A subscriber and the path of its unsubscribe link. */
  async function unsubscribeLink(): Promise<{ subscriberId: string; path: string; token: string }> {
    const lee = await subscriber(`lee-${randomUUID()}@example.test`);
    const url = await createUnsubscribeLink(runtime, team.principal.teamId, projectId, lee.id);
    const parsed = new URL(url, 'http://localhost:3000');
    return {
      subscriberId: lee.id,
      path: `${parsed.pathname}${parsed.search}`,
      token: parsed.searchParams.get('token')!,
    };
  }

  /** Queues a non-essential message (a welcome) for the subscriber; returns the statuses of its log. */
  async function welcomeStatuses(subscriberId: string): Promise<unknown[]> {
    await queueMessages(runtime, team.principal.teamId, [
      { kind: 'welcome', projectId, subscriberId, subscriptionId: null, occasion: randomUUID(), graceDay: null },
    ]);
    return (await messagesOf(subscriberId)).map((message) => message.status);
  }

  it('never opts out on GET; the confirmation button (with its CSRF token) does', async () => {
    const { subscriberId, path, token } = await unsubscribeLink();
    const page = await serve('GET', path);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<button type="submit">Unsubscribe</button>');
    expect(await welcomeStatuses(subscriberId)).toEqual(['queued']);

    const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body ?? '')![1];
    const cookies = [page.cookies![0].split(';')[0]];
    const withoutCsrf = await serve('POST', '/messages/unsubscribe', { cookies, form: { token } });
    expect(withoutCsrf.statusCode).toBe(403);
    expect(await welcomeStatuses(subscriberId)).toEqual(['queued', 'queued']);

    const confirmed = await serve('POST', '/messages/unsubscribe', { cookies, form: { token, csrf_token: csrf } });
    expect(confirmed.statusCode).toBe(200);
    expect(confirmed.body).toContain('You will only get essential notices');
    expect(await welcomeStatuses(subscriberId)).toEqual(['skipped', 'queued', 'queued']);
  });

  it('opts out on an RFC 8058 one-click POST without CSRF token or cookies', async () => {
    const { subscriberId, path } = await unsubscribeLink();
    const oneClick = await serve('POST', path, { form: { 'List-Unsubscribe': 'One-Click' } });
    expect(oneClick.statusCode).toBe(200);
    expect(await welcomeStatuses(subscriberId)).toEqual(['skipped']);
  });

  it('changes nothing for an unknown token', async () => {
    const { subscriberId } = await unsubscribeLink();
    const unknown = await serve('POST', `/messages/unsubscribe?token=msu_${'x'.repeat(44)}`, {
      form: { 'List-Unsubscribe': 'One-Click' },
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain('Page not found');
    expect(await welcomeStatuses(subscriberId)).toEqual(['queued']);
  });
});
