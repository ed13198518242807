import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ABILITIES, ABILITY_VALUES, isAbility } from '../../shared/catalogues/abilities.js';
import { ENUM_RESOURCES } from '../../shared/catalogues/resources.js';
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
import { unique } from '../support/fixtures/catalogues.js';

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
        grace_period_end: null,
        discount: null,
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
        trial_payment_method_required: true,
        allow_promotion_codes: false,
        grace_days: 7,
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
