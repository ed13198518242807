import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ABILITIES, isAbility } from '../../shared/catalogues/abilities.js';
import { ERROR_CODES, errorCode } from '../../shared/catalogues/error-codes.js';
import { PAYMENT_PROVIDERS } from '../../shared/catalogues/payment-providers.js';
import { CREATE_PROJECT_PLATFORM_TYPES, PLATFORM_TYPES } from '../../shared/catalogues/platform-types.js';
import { ENUM_RESOURCES, enumResource, webhookEventsDocument } from '../../shared/catalogues/resources.js';
import { SUBSCRIPTION_STATUSES } from '../../shared/catalogues/subscription-statuses.js';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { API_VERSION } from '../../shared/catalogues/version.js';
import { WEBHOOK_EVENTS } from '../../shared/catalogues/webhook-events.js';
import { unique } from '../support/fixtures/catalogues.js';

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
