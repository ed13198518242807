import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ABILITIES, ABILITY_VALUES, isAbility } from '../../shared/catalogues/abilities.js';
import { ERROR_CODES, errorCode } from '../../shared/catalogues/error-codes.js';
import { PAYMENT_PROVIDERS } from '../../shared/catalogues/payment-providers.js';
import { CREATE_PROJECT_PLATFORM_TYPES, PLATFORM_TYPES } from '../../shared/catalogues/platform-types.js';
import { ENUM_RESOURCES, enumResource, webhookEventsDocument } from '../../shared/catalogues/resources.js';
import { SUBSCRIPTION_STATUSES } from '../../shared/catalogues/subscription-statuses.js';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { API_VERSION } from '../../shared/catalogues/version.js';
import {
  WEBHOOK_EVENTS,
  WEBHOOK_EVENT_FAMILIES,
  WEBHOOK_EVENT_NAMES,
  eventDataSchema,
  isWebhookEventName,
  webhookEvent,
} from '../../shared/catalogues/webhook-events.js';
import { FACTS } from '../../shared/domain/facts.js';
import { MODULES } from '../../shared/domain/modules.js';
import { BUILT_IN_ROLES } from '../../shared/domain/roles/built-in.js';
import { EVENTS_BY_MODULE } from '../../shared/domain/webhook-events.js';

const unique = (values: readonly unknown[]) => new Set(values).size === values.length;

describe('version', () => {
  it('is the 2026-05-01 stamp', () => {
    expect(API_VERSION).toBe('2026-05-01');
  });
});

describe('catalogue sizes', () => {
  // The one place that asserts the interface's fixed numbers ("Limits → Catalogue sizes", "Events →
  // Families" plus DESIGN D6's `webhook_endpoint.test`); everything else counts the catalogues.
  it('matches the interface: 42 tools, 6 resources, 65 abilities, 71 events and the family counts', () => {
    expect(TOOL_DEFINITIONS).toHaveLength(42);
    expect(ENUM_RESOURCES).toHaveLength(6);
    expect(ABILITIES).toHaveLength(65);
    expect(WEBHOOK_EVENTS).toHaveLength(71);
    expect(WEBHOOK_EVENT_FAMILIES).toEqual({
      project: 12,
      plan: 6,
      subscription: 14,
      payment: 4,
      member: 10,
      access_code: 3,
      team: 6,
      role: 3,
      group: 3,
      billing: 9,
      webhook_endpoint: 1,
    });
  });
});

describe('abilities', () => {
  it('has unique abilities', () => {
    expect(ABILITY_VALUES).toHaveLength(ABILITIES.length);
    expect(unique(ABILITY_VALUES)).toBe(true);
  });

  it('contains every ability the interface names, with its domain category', () => {
    const expected: Record<string, string> = {
      'project:view-any': 'project',
      'project:view': 'project',
      'project-user:view-any': 'subscriber',
      'project-user:view': 'subscriber',
      'project-subscription-plan:view-any': 'plan',
      'project-access-code:view-any': 'access_code',
      'webhook-endpoint:manage': 'webhook',
      'activity:read': 'activity',
      'mcp:full': 'mcp',
    };
    for (const [value, category] of Object.entries(expected)) {
      expect(ABILITIES.find((ability) => ability.value === value)?.category, value).toBe(category);
    }
  });

  it('contains the abilities the code depends on', () => {
    for (const value of [
      'team:view',
      'project:create',
      'project:update',
      'project:delete',
      'token:view-any',
      'token:create',
      'token:revoke',
      'webhook-delivery:view-any',
      'webhook-delivery:retry',
    ]) {
      expect(isAbility(value), value).toBe(true);
    }
    expect(isAbility('project:fly')).toBe(false);
  });

  it('uses the <object>:<verb> style and a non-empty description', () => {
    for (const ability of ABILITIES) {
      expect(ability.value).toMatch(/^[a-z]+(-[a-z]+)*:[a-z]+(-[a-z]+)*$/);
      expect(ability.description.length).toBeGreaterThan(0);
    }
  });
});

describe('built-in roles', () => {
  it('hold what their descriptions say: the reads, every ability but two for admin, all for owner (DESIGN D19)', () => {
    const role = (name: string) => BUILT_IN_ROLES.find((candidate) => candidate.name === name)!.abilities;
    const reads = ABILITY_VALUES.filter((ability) => /:view(-any)?$/.test(ability) && ability !== 'project-user:view');
    expect(role('owner')).toEqual([...ABILITY_VALUES]);
    expect(role('admin')).toEqual(
      ABILITY_VALUES.filter((ability) => ability !== 'team:delete' && ability !== 'billing:update'),
    );
    expect(role('viewer')).toEqual(reads);
    expect(role('analyst')).toEqual(expect.arrayContaining(reads));
    expect(role('developer')).toEqual(
      expect.arrayContaining(reads.filter((ability) => !ability.startsWith('billing'))),
    );
    expect(role('support')).toContain('project-user:view');
  });
});

describe('object facts', () => {
  it('lists the operations.ts, facts.ts and webhook-events.ts of every object folder', () => {
    const domain = join(dirname(fileURLToPath(import.meta.url)), '../../shared/domain');
    const folders = readdirSync(domain, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    const having = (file: string) => folders.filter((folder) => existsSync(join(domain, folder.name, file))).length;
    expect(MODULES).toHaveLength(having('operations.ts'));
    expect(FACTS).toHaveLength(having('facts.ts'));
    expect(EVENTS_BY_MODULE).toHaveLength(having('webhook-events.ts'));
  });
});

describe('webhook events', () => {
  it('has unique events, counted per family in catalogue order', () => {
    expect(WEBHOOK_EVENT_NAMES).toHaveLength(WEBHOOK_EVENTS.length);
    expect(unique(WEBHOOK_EVENT_NAMES)).toBe(true);
    const counts: Record<string, number> = {};
    for (const event of WEBHOOK_EVENTS) counts[event.family] = (counts[event.family] ?? 0) + 1;
    expect(Object.entries(WEBHOOK_EVENT_FAMILIES)).toEqual(Object.entries(counts));
  });

  it('names every event <family>.<event> in snake_case', () => {
    for (const event of WEBHOOK_EVENTS) {
      expect(event.name).toMatch(/^[a-z_]+\.[a-z_]+$/);
      expect(event.name.startsWith(`${event.family}.`)).toBe(true);
    }
  });

  it('includes the named events', () => {
    for (const name of [
      'subscription.created',
      'subscription.upgraded',
      'subscription.downgraded',
      'payment.succeeded',
      'payment.failed',
      'payment.pending',
      'payment.refunded',
      'member.joined',
      'member.converted',
      'member.churned',
      'member.banned',
      'member.kicked',
      'access_code.batch_generated',
      'access_code.redeemed',
      'access_code.expired',
      'webhook_endpoint.test',
    ]) {
      expect(isWebhookEventName(name), name).toBe(true);
    }
    expect(isWebhookEventName('subscription.dormant')).toBe(false);
  });

  it('gives every event a minimum ability from the ability catalogue', () => {
    for (const event of WEBHOOK_EVENTS) expect(isAbility(event.minimum_ability), event.name).toBe(true);
  });

  it('has a null project_id for team-scoped, billing and test events', () => {
    for (const event of WEBHOOK_EVENTS) {
      const projectScoped = ['project', 'plan', 'subscription', 'payment', 'member', 'access_code'].includes(
        event.family,
      );
      expect(event.project_scoped, event.name).toBe(projectScoped);
    }
  });

  describe('subscription.created data', () => {
    const id = () => crypto.randomUUID();
    const now = new Date().toISOString();
    const projectId = id();
    const subscriberId = id();
    const planId = id();
    const sample = {
      subscription: {
        id: id(),
        project_id: projectId,
        subscriber_id: subscriberId,
        plan_id: planId,
        status: 'active',
        previous_status: null,
        has_access: true,
        source: 'provider',
        payment_provider: 'stripe',
        price_version: 1,
        starts_at: now,
        ends_at: null,
        trial_ends_at: null,
        current_period_start: now,
        current_period_end: now,
        cancel_at_period_end: false,
        canceled_at: null,
        cancellation_reason: null,
        invite_links: [],
        status_changed_at: now,
        created_at: now,
        updated_at: now,
      },
      subscriber: {
        id: subscriberId,
        project_id: projectId,
        display_name: 'Ada',
        platform_user_id: '42',
        consent: true,
        provider_customer_id: null,
        member_id: null,
        status: 'active',
        banned_at: null,
        created_at: now,
        updated_at: now,
      },
      plan: {
        id: planId,
        project_id: projectId,
        name: 'Gold',
        description: null,
        amount: 900,
        currency: 'USD',
        interval: 'month',
        interval_count: 1,
        access_days: null,
        trial_days: 0,
        status: 'active',
        price_version: 1,
        price_history: [
          {
            version: 1,
            amount: 900,
            currency: 'USD',
            interval: 'month',
            interval_count: 1,
            access_days: null,
            effective_from: now,
          },
        ],
        sync_status: 'synced',
        payment_provider: 'manual',
        provider_product_id: `manual_prod_${planId}`,
        provider_price_id: `manual_price_${planId}_v1`,
        synced_at: now,
        sync_error: null,
        created_at: now,
        updated_at: now,
      },
      access_code: null,
    };
    const schema = eventDataSchema('subscription.created');

    it('accepts a valid sample', () => {
      expect(schema.safeParse(sample).success).toBe(true);
      expect(webhookEvent('subscription.created').data_schema).toBe(schema);
    });

    it('accepts consented contact details', () => {
      const withContact = { ...sample, subscriber: { ...sample.subscriber, email: 'ada@example.com', phone: null } };
      expect(schema.safeParse(withContact).success).toBe(true);
    });

    it('rejects a sample without plan', () => {
      const { plan: _plan, ...withoutPlan } = sample;
      expect(schema.safeParse(withoutPlan).success).toBe(false);
    });

    it('strips fields outside the published shape', () => {
      const leaky = { ...sample, subscriber: { ...sample.subscriber, passkey: 'secret' }, card_number: '4242' };
      const parsed = schema.parse(leaky) as Record<string, any>;
      expect(parsed).not.toHaveProperty('card_number');
      expect(parsed.subscriber).not.toHaveProperty('passkey');
    });
  });

  it('has a test event data shape', () => {
    const schema = eventDataSchema('webhook_endpoint.test');
    expect(schema.safeParse({ webhook_endpoint_id: crypto.randomUUID(), message: 'hello' }).success).toBe(true);
    expect(schema.safeParse({ message: 'hello' }).success).toBe(false);
  });
});

describe('subscription statuses', () => {
  it('has 13 unique statuses with unpaid and past_due, and no dormant', () => {
    const values = SUBSCRIPTION_STATUSES.map((status) => status.value);
    expect(values).toHaveLength(13);
    expect(unique(values)).toBe(true);
    expect(values).toContain('unpaid');
    expect(values).toContain('past_due');
    expect(values).not.toContain('dormant');
  });

  it('gives every status a label and a colour family', () => {
    const colours = ['green', 'blue', 'yellow', 'orange', 'red', 'gray', 'purple'];
    for (const status of SUBSCRIPTION_STATUSES) {
      expect(status.label.length).toBeGreaterThan(0);
      expect(colours).toContain(status.color);
    }
  });
});

describe('payment providers and platform types', () => {
  it('have unique values', () => {
    expect(unique(PAYMENT_PROVIDERS.map((provider) => provider.value))).toBe(true);
    expect(unique(PLATFORM_TYPES.map((platform) => platform.value))).toBe(true);
  });

  it('derive the create_project subset from the catalogue', () => {
    expect(CREATE_PROJECT_PLATFORM_TYPES.length).toBeGreaterThan(0);
    expect([...CREATE_PROJECT_PLATFORM_TYPES]).toEqual(
      PLATFORM_TYPES.filter((platform) => platform.create_project_accepts).map((platform) => platform.value),
    );
    expect(z.enum(CREATE_PROJECT_PLATFORM_TYPES).safeParse('telegram').success).toBe(true);
  });

  it('say which providers a project can connect now (stripe and manual) and which resources each platform links', () => {
    expect(PAYMENT_PROVIDERS.filter((provider) => provider.connectable).map((provider) => provider.value)).toEqual([
      'stripe',
      'manual',
    ]);
    expect(
      enumResource('service://enums/payment-provider')!
        .read()
        .items.find((item) => item.value === 'stripe'),
    ).toMatchObject({ connectable: true });
    expect(
      enumResource('service://enums/payment-provider')!
        .read()
        .items.find((item) => item.value === 'paypal'),
    ).toMatchObject({ connectable: false });
    for (const platform of PLATFORM_TYPES) expect(platform.resource_kinds.length, platform.value).toBeGreaterThan(0);
    expect(
      enumResource('service://enums/platform-type')!
        .read()
        .items.find((item) => item.value === 'discord'),
    ).toMatchObject({ resource_kinds: ['server', 'channel', 'role'], connectable: true });
    expect(PLATFORM_TYPES.filter((platform) => platform.connectable).map((platform) => platform.value)).toEqual([
      'telegram',
      'discord',
    ]);
  });
});

describe('error codes', () => {
  it('lists exactly the codes the service returns, with their statuses', () => {
    expect(Object.fromEntries(ERROR_CODES.map((error) => [error.code, error.status]))).toEqual({
      AUTHENTICATION_REQUIRED: 401,
      TOKEN_MISSING_ABILITY: 403,
      RATE_LIMITED: 429,
      VALIDATION_FAILED: 422,
      NOT_FOUND: 404,
      METHOD_NOT_ALLOWED: 405,
      UNSUPPORTED_MEDIA_TYPE: 415,
      PAYLOAD_TOO_LARGE: 413,
      IDEMPOTENCY_KEY_REUSED: 422,
      IDEMPOTENCY_KEY_IN_USE: 409,
      CONFLICT: 409,
      CSRF_TOKEN_INVALID: 403,
      BILLING_LOCKED: 402,
      TIER_LIMIT_REACHED: 402,
      PROVIDER_UNAVAILABLE: 502,
      INTERNAL_ERROR: 500,
    });
    expect(unique(ERROR_CODES.map((error) => error.code))).toBe(true);
  });

  it('gives every code a unique docs_url anchor and a valid HTTP error status', () => {
    expect(unique(ERROR_CODES.map((error) => error.docs_url))).toBe(true);
    for (const error of ERROR_CODES) {
      expect(Number.isInteger(error.status)).toBe(true);
      expect(error.status).toBeGreaterThanOrEqual(400);
      expect(error.status).toBeLessThanOrEqual(599);
      expect(error.title.length).toBeGreaterThan(0);
      expect(error.hint.length).toBeGreaterThan(0);
      expect(error.docs_url).toBe(
        `https://docs.membership.example/errors#${error.code.toLowerCase().replaceAll('_', '-')}`,
      );
    }
    expect(errorCode('TOKEN_MISSING_ABILITY').docs_url).toBe(
      'https://docs.membership.example/errors#token-missing-ability',
    );
  });
});

describe('tools', () => {
  it('has tools with unique names', () => {
    expect(unique(TOOL_DEFINITIONS.map((tool) => tool.name))).toBe(true);
  });

  it('requires the abilities the interface and the code name', () => {
    const expected: Record<string, string> = {
      list_projects: 'project:view-any',
      get_project: 'project:view',
      list_subscribers: 'project-user:view-any',
      list_plans: 'project-subscription-plan:view-any',
      list_access_codes: 'project-access-code:view-any',
      list_webhook_endpoints: 'webhook-endpoint:manage',
      get_activity_log: 'activity:read',
      create_project: 'project:create',
      update_project: 'project:update',
      get_team: 'authenticated',
      get_webhook_endpoint: 'webhook-endpoint:manage',
      create_webhook_endpoint: 'webhook-endpoint:manage',
      update_webhook_endpoint: 'webhook-endpoint:manage',
      delete_webhook_endpoint: 'webhook-endpoint:manage',
      rotate_webhook_endpoint_secret: 'webhook-endpoint:manage',
      send_test_webhook_event: 'webhook-endpoint:manage',
      list_webhook_deliveries: 'webhook-delivery:view-any',
      get_webhook_delivery: 'webhook-delivery:view-any',
      retry_webhook_delivery: 'webhook-delivery:retry',
      replay_dead_webhook_deliveries: 'webhook-delivery:retry',
      list_tokens: 'token:view-any',
    };
    for (const [name, ability] of Object.entries(expected)) {
      expect(TOOL_DEFINITIONS.find((tool) => tool.name === name)?.ability, name).toBe(ability);
    }
  });

  it('gives every tool an ability from the catalogue, named at the end of its description, except the smoke test that needs none', () => {
    for (const tool of TOOL_DEFINITIONS) {
      expect(tool.ability).not.toBe('mcp:full');
      expect(tool.annotations.openWorldHint).toBe(false);
      if (tool.name === 'get_team') {
        // DESIGN D2: the smoke test needs a valid token and no ability (on the tool server, the mcp:full gate only).
        expect(tool.ability).toBe('authenticated');
        expect(tool.description.endsWith('Requires no ability beyond `mcp:full`.'), tool.name).toBe(true);
        continue;
      }
      expect(isAbility(tool.ability), tool.name).toBe(true);
      expect(tool.description.endsWith(`Requires ability \`${tool.ability}\`.`), tool.name).toBe(true);
    }
  });

  it('describes every input field and rejects unknown arguments', () => {
    for (const tool of TOOL_DEFINITIONS) {
      const schema = z.toJSONSchema(tool.inputSchema) as {
        properties: Record<string, { description?: string }>;
        additionalProperties?: boolean;
      };
      expect(schema.additionalProperties, tool.name).toBe(false);
      for (const [field, property] of Object.entries(schema.properties)) {
        expect(property.description, `${tool.name}.${field}`).toBeTruthy();
      }
    }
  });

  it('validates the key inputs', () => {
    const input = (name: string) => TOOL_DEFINITIONS.find((tool) => tool.name === name)!.inputSchema;
    expect(input('list_projects').safeParse({}).success).toBe(true);
    expect(input('list_projects').safeParse({ limit: 101 }).success).toBe(false);
    expect(input('list_projects').safeParse({ extra: true }).success).toBe(false);
    expect(input('create_project').safeParse({ name: 'Club', platform_type: 'telegram' }).success).toBe(true);
    expect(input('create_project').safeParse({ name: '', platform_type: 'telegram' }).success).toBe(false);
    const endpoint = { name: 'Hook', url: 'https://hooks.example.com/in', events: ['subscription.created'] };
    expect(input('create_webhook_endpoint').safeParse(endpoint).success).toBe(true);
    expect(
      input('create_webhook_endpoint').safeParse({ ...endpoint, url: 'http://hooks.example.com/in' }).success,
    ).toBe(false);
    expect(input('create_webhook_endpoint').safeParse({ ...endpoint, events: [] }).success).toBe(false);
    expect(input('create_webhook_endpoint').safeParse({ ...endpoint, events: ['nope.event'] }).success).toBe(false);
    expect(
      input('create_webhook_endpoint').safeParse({ ...endpoint, allowed_ips: ['203.0.113.7', '::1'] }).success,
    ).toBe(true);
    expect(input('create_webhook_endpoint').safeParse({ ...endpoint, allowed_ips: ['not-an-ip'] }).success).toBe(false);
    expect(input('replay_dead_webhook_deliveries').safeParse({ since_hours: 24 }).success).toBe(true);
    expect(input('replay_dead_webhook_deliveries').safeParse({ since_hours: 0 }).success).toBe(false);
    expect(input('replay_dead_webhook_deliveries').safeParse({ since_hours: 721 }).success).toBe(false);
    expect(input('get_project').safeParse({ project_id: crypto.randomUUID() }).success).toBe(true);
    expect(input('update_project').safeParse({ project_id: crypto.randomUUID(), idempotency_key: 'x' }).success).toBe(
      false,
    );
  });
});

describe('resources', () => {
  it('publishes the enum resources in the interface order', () => {
    expect(ENUM_RESOURCES.map((resource) => resource.uri)).toEqual([
      'service://enums/ability',
      'service://enums/error-code',
      'service://enums/payment-provider',
      'service://enums/platform-type',
      'service://enums/subscription-status',
      'service://enums/webhook-event',
    ]);
  });

  it('wraps every resource in the versioned envelope', () => {
    for (const resource of ENUM_RESOURCES) {
      const body = resource.read();
      expect(body.version).toBe(API_VERSION);
      expect(body.count).toBe(body.items.length);
      for (const item of body.items) {
        expect(typeof item.value).toBe('string');
        expect(typeof item.category).toBe('string');
      }
    }
    expect(enumResource('service://enums/ability')!.read().count).toBe(ABILITIES.length);
    expect(enumResource('service://enums/webhook-event')!.read().count).toBe(WEBHOOK_EVENTS.length);
    expect(enumResource('service://enums/subscription-status')!.read().count).toBe(13);
    expect(enumResource('service://enums/platform-type')!.read().create_project_accepts).toEqual([
      ...CREATE_PROJECT_PLATFORM_TYPES,
    ]);
    const error = enumResource('service://enums/error-code')!
      .read()
      .items.find((item) => item.value === 'RATE_LIMITED');
    expect(error).toMatchObject({ status: 429, category: 'rate_limit' });
  });

  it('builds the webhook-events.json document with a JSON Schema per event', () => {
    const document = webhookEventsDocument();
    expect(document.version).toBe(API_VERSION);
    expect(document.count).toBe(WEBHOOK_EVENTS.length);
    expect(document.events).toHaveLength(WEBHOOK_EVENTS.length);
    const created = document.events.find((event) => event.name === 'subscription.created')!;
    expect(created.data_schema).toMatchObject({
      type: 'object',
      required: expect.arrayContaining(['subscription', 'subscriber', 'plan', 'access_code']),
    });
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });
});
