/**
 * The creator-side domain end to end (issue "Creator-side domain"): the real local server process, a
 * creator driving projects, plans, access codes, team members, roles and groups over REST as a customer
 * would, and an HTTPS receiver subscribed to every event of those families that checks each delivery's
 * signature with the receiver's own check (test/support/signature.ts) and each envelope against the
 * published schema (ajv). TIME_SCALE makes the access-code expiry worker run every 250 ms of real time.
 *
 * Events these families publish that this walk cannot see (each is covered by an integration test):
 * `team.created` happens before the team can have an endpoint; `plan.sync_failed` needs a provider that
 * fails (the `manual` provider cannot); `access_code.redeemed` comes with redemption (subscriber side).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WEBHOOK_EVENTS } from '../../shared/catalogues/webhook-events.js';
import { expectPublishedEvent } from '../support/events.js';
import { startTestReceiver, type TestReceiver } from '../support/https-receiver.js';
import { startLocalProcess, type LocalProcess } from '../support/local-process.js';
import { restCall } from '../support/rest-client.js';
import { checkSignature } from '../support/signature.js';
import { startFakeBotApi, type FakeBotApi } from '../support/telegram-bot-api.js';
import { acceptInvitation } from '../support/local-service.js';

const FAMILIES = ['project', 'plan', 'access_code', 'team', 'role', 'group'];
const FAMILY_EVENTS = WEBHOOK_EVENTS.map((event) => event.name).filter((name) => FAMILIES.includes(name.split('.')[0]));
const NOT_REACHABLE_HERE = ['team.created', 'plan.sync_failed', 'access_code.redeemed'];

let service: LocalProcess;
let receiver: TestReceiver;
let telegram: FakeBotApi;
let secret = '';
const received: { type: string; signatureProblem: string | null; envelope: any }[] = [];

const call = restCall(() => service);

/**
 * REST as the demo token, expecting one of `expected` statuses (default: 2xx of a write, 200 of a read and archive).
 */
async function api(
  method: string,
  path: string,
  body?: unknown,
  expected = method === 'POST' && !path.includes('/archive') ? [200, 201, 202] : [200],
) {
  const answer = await call(method, path, body);
  expect(expected, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`).toContain(answer.status);
  return answer.body;
}

beforeAll(async () => {
  receiver = await startTestReceiver((headers, body) => {
    received.push({
      type: JSON.parse(body).type,
      signatureProblem: checkSignature({ header: String(headers['svc-signature']), rawBody: body, secret }),
      envelope: JSON.parse(body),
    });
    return 200;
  });
  telegram = await startFakeBotApi();
  service = await startLocalProcess({
    WEBHOOK_EXTRA_CA_FILE: receiver.caFile,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: '1',
    TIME_SCALE: '100000',
    TELEGRAM_API_ROOT: telegram.url,
  });
});

afterAll(async () => {
  await service?.stop();
  await receiver?.close();
  await telegram?.stop();
});

describe('the creator side through the local server', () => {
  it('emits every event of the project, plan, access code, team, role and group families, signed and as published', async () => {
    expect(FAMILY_EVENTS).toHaveLength(33);
    const endpoint = await api('POST', '/v1/webhook-endpoints', {
      name: 'everything',
      url: receiver.url,
      events: FAMILY_EVENTS,
    });
    secret = endpoint.secret;

    // Projects: update, bot, resources, provider, archive, unarchive.
    const project = await api('POST', '/v1/projects', { name: 'Book club', platform_type: 'telegram' });
    await api('POST', `/v1/projects/${project.id}`, { description: 'Monthly reads' });
    // The bot (a fake Bot API): connected with its token; its permissions arrive through the Telegram hook.
    const botToken = `7001:${'x'.repeat(35)}`;
    telegram.addBot(botToken, { id: 7001, username: 'club_bot' });
    await api('PUT', `/v1/projects/${project.id}/bot`, { token: botToken });
    const hook = telegram.callsOf('setWebhook').at(-1)!.payload;
    expect(hook.url).toBe(`${service.baseUrl}/hooks/telegram/${project.id}`);
    const bot = { id: 7001, is_bot: true, first_name: 'Club bot', username: 'club_bot' };
    const promoted = await fetch(String(hook.url), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Telegram-Bot-Api-Secret-Token': String(hook.secret_token) },
      body: JSON.stringify({
        update_id: 1,
        my_chat_member: {
          chat: { id: -100123, type: 'supergroup' },
          from: { id: 1, is_bot: false, first_name: 'Owner' },
          date: 1,
          old_chat_member: { status: 'member', user: bot },
          new_chat_member: { status: 'administrator', user: bot, can_invite_users: true, can_restrict_members: true },
        },
      }),
    });
    expect(promoted.status).toBe(200);
    const resource = await api('POST', `/v1/projects/${project.id}/resources`, {
      kind: 'group',
      platform_resource_id: '-100123',
      name: 'Readers',
    });
    await api('DELETE', `/v1/projects/${project.id}/resources/${resource.id}`);
    await api('DELETE', `/v1/projects/${project.id}/bot`);
    await api('PUT', `/v1/projects/${project.id}/payment-provider`, { provider: 'manual' });

    // Plans: created (and synced at once to the manual provider), updated, deactivated, activated, synced.
    const plan = await api('POST', `/v1/projects/${project.id}/plans`, {
      name: 'Gold',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    await api('POST', `/v1/plans/${plan.id}`, { name: 'Gold readers' });
    await api('POST', `/v1/plans/${plan.id}/deactivate`);
    await api('POST', `/v1/plans/${plan.id}/activate`);
    await api('POST', `/v1/plans/${plan.id}/sync`);

    // Access codes: a batch that expires five seconds from now (the deadline worker then expires them, while
    // the calls below run). The server's clock is the real one: far enough ahead that a slow request on a
    // loaded machine still finds the time in the future (at two seconds, one did not).
    const batch = await api('POST', `/v1/projects/${project.id}/access-codes/batches`, {
      plan_id: plan.id,
      count: 2,
      expires_at: new Date(Date.now() + 5_000).toISOString(),
    });
    expect(batch.codes).toHaveLength(2);

    // Roles, groups, members.
    const role = await api('POST', '/v1/roles', {
      name: 'Moderators',
      abilities: ['project:view', 'project-user:view-any'],
    });
    await api('POST', `/v1/roles/${role.id}`, { description: 'Keep the peace' });
    const group = await api('POST', '/v1/groups', { name: 'Night shift' });
    const invitation = await api('POST', '/v1/team-members/invitations', {
      email: 'mo@example.com',
      name: 'Mo',
      role_ids: [role.id],
    });
    const accepted = await acceptInvitation(service, invitation.invitation_token);
    expect(accepted.status).toBe(200);
    const memberId = accepted.body.team_member.id;
    await api('POST', `/v1/team-members/${memberId}`, { role_ids: [], group_ids: [group.id] });
    await api('POST', `/v1/groups/${group.id}`, { description: 'Evenings' });
    await api('DELETE', `/v1/team-members/${memberId}`);
    await api('DELETE', `/v1/groups/${group.id}`);
    await api('DELETE', `/v1/roles/${role.id}`);

    // The project goes: archive, unarchive, then delete (no live subscriptions).
    await api('POST', `/v1/projects/${project.id}/archive`);
    await api('POST', `/v1/projects/${project.id}/unarchive`);
    await api('DELETE', `/v1/projects/${project.id}/payment-provider`);
    await vi.waitFor(() => expect(received.map((item) => item.type)).toContain('access_code.expired'), {
      timeout: 30_000,
      interval: 100,
    });
    await api('DELETE', `/v1/projects/${project.id}`);

    // Last, the team itself.
    const team = await api('GET', '/v1/teams/current');
    await api('DELETE', `/v1/teams/current?confirm_team_id=${team.id}`);

    const expected = FAMILY_EVENTS.filter((name) => !NOT_REACHABLE_HERE.includes(name));
    await vi.waitFor(
      () => expect([...new Set(received.map((item) => item.type))].sort()).toEqual(expect.arrayContaining(expected)),
      { timeout: 30_000, interval: 100 },
    );
    expect(expected).toHaveLength(30);
    for (const item of received) {
      expect(item.signatureProblem, item.type).toBeNull();
      expectPublishedEvent(item.envelope);
    }
    // Secrets never travel in payloads: the invitation token and the access codes stay out of every event.
    const everything = JSON.stringify(received.map((item) => item.envelope));
    expect(everything).not.toContain(invitation.invitation_token);
    for (const code of batch.codes) expect(everything).not.toContain(code.code);
  });
});
