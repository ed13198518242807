/**
 * The dashboard's project forms without a browser (DESIGN D21, D22, D26): a project created, edited,
 * archived and unarchived from its forms through the same operations as REST; deleting a project with a
 * live subscription shows the operation's CONFLICT on the confirmation page; a bot or Stripe connection the
 * provider refuses comes back on the settings form without the secret typed into it; POSTs need the CSRF token.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSession } from '../../shared/domain/team-members/sessions.js';
import { handleDashboardRequest } from '../../shared/dashboard/router.js';
import { runAnyOperation, dashboardEvent } from '../support/calls.js';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import { ensureTeamOwner } from '../../shared/domain/team-members/changes.js';
import type { Project } from '../../shared/domain/projects/schema.js';
import { createTestRuntime, seedTeam, testClock } from '../support/store.js';
import { startFakeBotApi, type FakeBotApi } from '../support/telegram-bot-api.js';

const PUBLIC_BASE_URL = 'https://members.example';
let telegram: FakeBotApi;

beforeAll(async () => {
  telegram = await startFakeBotApi();
});
afterAll(async () => {
  await telegram.stop();
});

/**
 * A team with its owner signed in to the dashboard, and GET/POST helpers (POSTs carry the session's CSRF token unless
 * `csrf` is false).
 */
async function signedIn() {
  const clock = testClock();
  const runtime = await createTestRuntime({ clock });
  runtime.integrations = {
    keyEncryptionKey: localKeyEncryptionKey(randomBytes(32)),
    telegramApiRoot: telegram.url,
    stripeApiBaseUrl: 'http://127.0.0.1:9',
    discordApiBaseUrl: 'http://127.0.0.1:9',
    publicBaseUrl: PUBLIC_BASE_URL,
    retry: { retries: 0, minTimeoutMs: 0 },
  };
  const seeded = await seedTeam(runtime.store, clock);
  const owner = await ensureTeamOwner(runtime, seeded.team.id, {
    email: `owner-${randomUUID()}@example.com`,
    name: 'Owner',
  });
  const { session, cookieValue } = await createSession(runtime.store, clock, {
    teamId: seeded.team.id,
    memberId: owner.id,
    state: 'active',
    method: 'passkey',
  });
  const get = (path: string) => handleDashboardRequest(runtime, dashboardEvent('GET', path, { cookie: cookieValue }));
  const post = (path: string, fields: Record<string, string>, options: { csrf?: boolean } = {}) =>
    handleDashboardRequest(
      runtime,
      dashboardEvent('POST', path, {
        cookie: cookieValue,
        form: new URLSearchParams({
          ...(options.csrf === false ? {} : { csrf_token: session.csrf_token }),
          idempotency_key: randomUUID(),
          ...fields,
        }).toString(),
      }),
    );
  const run = async <T>(
    operation: Parameters<typeof runAnyOperation>[2],
    input: Record<string, unknown>,
  ): Promise<T> => {
    const outcome = await runAnyOperation<T>(runtime, seeded.principal, operation, input, {
      requestId: randomUUID(),
      idempotencyKey: randomUUID(),
    });
    if (!outcome.ok) throw new Error(outcome.problem.detail);
    return outcome.result;
  };
  return { get, post, run };
}

/** Creates a project from the dashboard's form and returns its id (from the redirect to its settings). */
async function createFromForm(
  post: Awaited<ReturnType<typeof signedIn>>['post'],
  fields: Record<string, string>,
): Promise<string> {
  const created = await post('/dashboard/projects', fields);
  expect(created.statusCode).toBe(303);
  const location = String(created.headers?.Location);
  expect(location).toMatch(/^\/dashboard\/projects\/[0-9a-f-]{36}\/settings\?created=1$/);
  return /projects\/([0-9a-f-]{36})/.exec(location)![1];
}

describe('project forms', () => {
  it('creates a project with a platform of the catalogue, edits it, archives and unarchives it; the settings show the join link and the Stripe webhook URL', async () => {
    const { get, post, run } = await signedIn();
    const form = (await get('/dashboard/projects/new')).body;
    expect(form).toContain('<option value="telegram" selected>Telegram</option>');
    expect(form).not.toContain('value="whatsapp"');

    const projectId = await createFromForm(post, { name: 'Readers', platform_type: 'telegram', description: 'Books' });
    expect(await run<Project>('getProject', { project_id: projectId })).toMatchObject({
      name: 'Readers',
      platform_type: 'telegram',
      description: 'Books',
      status: 'active',
    });
    const settings = (await get(`/dashboard/projects/${projectId}/settings?created=1`)).body;
    expect(settings).toContain('The project is created.');
    expect(settings).toContain(`readonly>${PUBLIC_BASE_URL}/join/${projectId}</textarea>`);
    expect(settings).toContain(`readonly>${PUBLIC_BASE_URL}/hooks/stripe/${projectId}</textarea>`);
    expect(settings).toContain('<option value="channel">channel</option>');
    expect(settings).not.toContain('<option value="role">');

    const edited = await post(`/dashboard/projects/${projectId}/settings`, { name: 'Readers club', description: '' });
    expect(edited.statusCode).toBe(200);
    expect(edited.body).toContain('The project is saved.');
    expect(await run<Project>('getProject', { project_id: projectId })).toMatchObject({
      name: 'Readers club',
      description: null,
    });

    const refused = await post(`/dashboard/projects/${projectId}/settings`, { name: '' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('class="problem"');

    expect((await post(`/dashboard/projects/${projectId}/archive`, {})).body).toContain('The project is now archived.');
    expect((await run<Project>('getProject', { project_id: projectId })).status).toBe('archived');
    const archived = (await get(`/dashboard/projects/${projectId}/settings`)).body;
    expect(archived).toContain('>Unarchive project</button>');
    expect((await post(`/dashboard/projects/${projectId}/unarchive`, {})).body).toContain('The project is now active.');
    expect((await run<Project>('getProject', { project_id: projectId })).status).toBe('active');
  });

  it('delete: refused with the CONFLICT on the confirmation page while a subscription is live, done once it is not', async () => {
    const { get, post, run } = await signedIn();
    const projectId = await createFromForm(post, { name: 'Club', platform_type: 'web' });
    const plan = await run<{ id: string }>('createPlan', {
      project_id: projectId,
      name: 'Monthly',
      amount: 900,
      currency: 'EUR',
      interval: 'month',
    });
    const subscriber = await run<{ id: string }>('createSubscriber', { project_id: projectId, display_name: 'Ada' });
    const subscription = await run<{ id: string }>('createSubscription', {
      project_id: projectId,
      subscriber_id: subscriber.id,
      plan_id: plan.id,
    });

    expect((await get(`/dashboard/projects/${projectId}/delete`)).body).toContain('>Delete project Club</button>');
    const refused = await post(`/dashboard/projects/${projectId}/delete`, {});
    expect(refused.statusCode).toBe(409);
    expect(refused.body).toContain('CONFLICT');
    expect(refused.body).toContain('Delete project Club');
    expect((await run<Project>('getProject', { project_id: projectId })).id).toBe(projectId);

    await run('cancelSubscription', { id: subscription.id, at_period_end: false });
    const deleted = await post(`/dashboard/projects/${projectId}/delete`, {});
    expect(deleted.statusCode).toBe(303);
    expect(deleted.headers?.Location).toBe('/dashboard/projects?deleted=1');
    expect((await get('/dashboard/projects?deleted=1')).body).toContain('The project is deleted.');
  });

  it('a bot or Stripe connection the provider refuses is shown on the form, without the secret typed into it', async () => {
    const { post, run } = await signedIn();
    const projectId = await createFromForm(post, { name: 'Readers', platform_type: 'telegram' });

    const unknownToken = `4242:${randomBytes(24).toString('base64url')}`;
    const bot = await post(`/dashboard/projects/${projectId}/bot`, { platform: 'telegram', token: unknownToken });
    expect([422, 502]).toContain(bot.statusCode);
    expect(bot.headers?.['Content-Type']).toMatch(/text\/html/);
    expect(bot.body).toContain('class="problem"');
    expect(bot.body).not.toContain(unknownToken);
    expect((await run<Project>('getProject', { project_id: projectId })).bot).toBeNull();

    const secretKey = `rk_test_${randomBytes(16).toString('hex')}`;
    const webhookSecret = `whsec_${randomBytes(16).toString('hex')}`;
    const stripe = await post(`/dashboard/projects/${projectId}/payment-provider`, {
      provider: 'stripe',
      secret_key: secretKey,
      webhook_secret: webhookSecret,
    });
    expect([422, 502]).toContain(stripe.statusCode);
    expect(stripe.body).toContain('class="problem"');
    expect(stripe.body).not.toContain(secretKey);
    expect(stripe.body).not.toContain(webhookSecret);
    expect((await run<Project>('getProject', { project_id: projectId })).payment_provider).toBeNull();

    const manual = await post(`/dashboard/projects/${projectId}/payment-provider`, { provider: 'manual' });
    expect(manual.body).toContain('The payment provider manual is connected.');
    expect((await run<Project>('getProject', { project_id: projectId })).payment_provider).toMatchObject({
      provider: 'manual',
    });
    await post(`/dashboard/projects/${projectId}/payment-provider/disconnect`, {});
    expect((await run<Project>('getProject', { project_id: projectId })).payment_provider).toBeNull();
  });

  it('a Discord project asks for the token, application id, public key and client secret; a refusal keeps only the public fields', async () => {
    const { get, post } = await signedIn();
    const projectId = await createFromForm(post, { name: 'Guild', platform_type: 'discord' });
    const settings = (await get(`/dashboard/projects/${projectId}/settings`)).body;
    for (const field of ['token', 'application_id', 'public_key', 'client_secret'])
      expect(settings).toContain(`name="${field}"`);
    expect(settings).toContain('<option value="role">role</option>');

    const fields = {
      platform: 'discord',
      token: `${randomBytes(18).toString('base64url')}.${randomBytes(4).toString('base64url')}.${randomBytes(27).toString('base64url')}`,
      application_id: '112233445566778899',
      public_key: randomBytes(32).toString('hex'),
      client_secret: randomBytes(16).toString('hex'),
    };
    const refused = await post(`/dashboard/projects/${projectId}/bot`, fields);
    expect([422, 502]).toContain(refused.statusCode);
    expect(refused.body).toContain('class="problem"');
    expect(refused.body).toContain(`value="${fields.application_id}"`);
    expect(refused.body).toContain(`value="${fields.public_key}"`);
    expect(refused.body).not.toContain(fields.token);
    expect(refused.body).not.toContain(fields.client_secret);
  });

  it('links and unlinks a resource; every POST needs the session’s CSRF token', async () => {
    const { get, post, run } = await signedIn();
    const projectId = await createFromForm(post, { name: 'Readers', platform_type: 'telegram' });

    const linked = await post(`/dashboard/projects/${projectId}/resources`, {
      kind: 'group',
      platform_resource_id: '-100123',
      name: 'Readers chat',
    });
    expect(linked.body).toContain('The group is linked.');
    const [resource] = (await run<Project>('getProject', { project_id: projectId })).resources;
    expect(resource).toMatchObject({ kind: 'group', platform_resource_id: '-100123', name: 'Readers chat' });
    expect((await post(`/dashboard/projects/${projectId}/resources/${resource.id}/unlink`, {})).body).toContain(
      'The resource is unlinked.',
    );
    expect((await run<Project>('getProject', { project_id: projectId })).resources).toEqual([]);

    for (const [path, fields] of [
      ['/dashboard/projects', { name: 'Sneaky', platform_type: 'web' }],
      [`/dashboard/projects/${projectId}/settings`, { name: 'Renamed' }],
      [`/dashboard/projects/${projectId}/archive`, {}],
      [`/dashboard/projects/${projectId}/delete`, {}],
      [`/dashboard/projects/${projectId}/resources`, { kind: 'group', platform_resource_id: '-1' }],
    ] as const) {
      const refused = await post(path, fields, { csrf: false });
      expect(refused.statusCode).toBe(403);
      expect(refused.body).toContain('CSRF_TOKEN_INVALID');
    }
    expect(await run<Project>('getProject', { project_id: projectId })).toMatchObject({
      name: 'Readers',
      status: 'active',
      resources: [],
    });
    expect((await get('/dashboard/projects')).body).not.toContain('Sneaky');
  });
});
