/**
 * The tools the interface publishes whose domain is not built yet (issue "Operation modules": 25 of the
 * 42). This is the one place they live: each is listed by `tools/list` with its input schema, and every
 * call answers NOT_IMPLEMENTED (after the ability check and argument validation, like any tool). When an
 * object's folder gains the operation, its tool binding replaces the entry here.
 */
import * as z from 'zod';
import type { Ability } from '../catalogues/abilities.js';
import { PAYMENT_PROVIDER_VALUES } from '../catalogues/payment-providers.js';
import { IdempotencyKeyArgument, ListQuery } from '../schemas/common.js';
import type { ToolKind } from './definition.js';

/** One published tool without an operation yet. */
export interface NotImplementedTool {
  readonly name: string;
  readonly title: string;
  readonly ability: Ability;
  readonly kind: ToolKind;
  /** What the tool will do (the ability sentence is appended when listed). */
  readonly summary: string;
  readonly inputSchema: z.ZodObject;
  /** True for tools over team-wide data (members, roles, groups). */
  readonly teamWide: boolean;
}

const limitField = () => ListQuery.shape.limit;
const cursorField = () => ListQuery.shape.cursor;
const idempotencyKeyField = () => IdempotencyKeyArgument;
const uuid = (description: string) => z.uuid().describe(description);
const optionalUuid = (description: string) => z.uuid().optional().describe(description);
const projectFilter = () => optionalUuid('Only objects of this project. Default: every project the token can see.');
const reason = () => z.string().max(500).optional().describe('Free-text reason, recorded in the activity log.');
/** Tools over team-wide data among them (none left: members, roles and groups have their operations). */
const TEAM_WIDE = new Set<string>([]);

function tool<const N extends string>(name: N, title: string, ability: Ability, kind: ToolKind, summary: string, shape: z.ZodRawShape) {
  return { name, title, ability, kind, summary, inputSchema: z.object(shape).strict(), teamWide: TEAM_WIDE.has(name) } satisfies NotImplementedTool;
}

/** The tools published ahead of their domain (the 42 minus those bound to an operation). */
export const NOT_IMPLEMENTED_TOOLS = [
  tool('list_payments', 'List payments', 'project-payment:view-any', 'read',
    'List subscriber payments (no payment credentials, no fee breakdown).',
    {
      limit: limitField(),
      cursor: cursorField(),
      project_id: projectFilter(),
      subscriber_id: optionalUuid('Only payments of this subscriber.'),
      provider: z.enum(PAYMENT_PROVIDER_VALUES).optional().describe('Only payments through this provider.'),
      status: z.enum(['pending', 'succeeded', 'failed', 'refunded']).optional().describe('Only payments with this status.'),
    }),
  tool('get_payment', 'Get payment', 'project-payment:view', 'read',
    'Read one payment (no payment credentials, no fee breakdown).',
    { id: uuid('The payment id.') }),
  tool('refund_payment', 'Refund payment', 'project-payment:refund', 'destructive',
    'Refund a succeeded payment in full or in part.',
    {
      id: uuid('The payment id.'),
      amount: z.number().int().min(1).optional().describe('Amount to refund in the minor unit. Default: the whole remaining amount.'),
      reason: reason(),
      idempotency_key: idempotencyKeyField(),
    }),
] as const;
