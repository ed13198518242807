import * as z from '../../schemas/zod.js';
import { SUBSCRIPTION_STATUS_VALUES } from '../../catalogues/subscription-statuses.js';
import { LongText, NameText, Timestamp, Uuid, listOf } from '../../schemas/common.js';
import { MAX_BODY_LENGTH, MAX_SUBJECT_LENGTH, MESSAGE_DELIVERIES } from '../message-templates/schema.js';

/**
 * Broadcast shapes (DESIGN D12, D32): a creator's message to the consenting subscribers of a project whose
 * subscriptions match an audience, sent as a job in the background; the job reports its counts as it runs.
 */

/** A broadcast's statuses: `running` (batches of recipients still to queue) and `completed` (every batch queued). */
export const BROADCAST_STATUSES = ['running', 'completed'] as const;

/** Who a broadcast goes to: subscribers with a subscription to one of `plan_ids` and/or in one of `statuses`. */
export const BroadcastAudience = z
  .strictObject({
    plan_ids: z
      .optional(z.array(Uuid).check(z.minLength(1), z.maxLength(100)))
      .check(z.describe('Subscribers with a subscription to one of these plans.')),
    statuses: z
      .optional(z.array(z.enum(SUBSCRIPTION_STATUS_VALUES)).check(z.minLength(1), z.maxLength(13)))
      .check(
        z.describe('Subscribers with a subscription in one of these statuses (service://enums/subscription-status).'),
      ),
  })
  .check(
    z.superRefine((audience, context) => {
      if (!audience.plan_ids && !audience.statuses)
        context.addIssue({ code: 'custom', path: [], message: 'Give plan_ids, statuses or both.' });
    }),
  )
  .register(z.globalRegistry, {
    id: 'BroadcastAudience',
    // At least one of the two, as the refinement above says, so the published schema states it too.
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      jsonSchema.anyOf = [{ required: ['plan_ids'] }, { required: ['statuses'] }];
    },
  });
/** A broadcast's audience (see {@link BroadcastAudience}). */
export type BroadcastAudience = z.infer<typeof BroadcastAudience>;

/** The body of `POST /v1/projects/{project_id}/broadcasts`. */
export const CreateBroadcastRequest = z
  .strictObject({
    audience: BroadcastAudience,
    delivery: z
      ._default(z.enum(MESSAGE_DELIVERIES), 'preferred')
      .check(
        z.describe('`preferred` (default): the bot when the subscriber can be reached there, else e-mail; `both`.'),
      ),
    subject: NameText(MAX_SUBJECT_LENGTH).check(
      z.describe(`The e-mail subject: Liquid over the message variables, 1 to ${MAX_SUBJECT_LENGTH} characters.`),
    ),
    body: LongText(MAX_BODY_LENGTH, 1).check(
      z.describe(`The text: Liquid over the message variables (docs/messages.md), 1 to ${MAX_BODY_LENGTH} characters.`),
    ),
  })
  .register(z.globalRegistry, {
    id: 'CreateBroadcastRequest',
    examples: [
      {
        audience: { statuses: ['active', 'trialing'] },
        delivery: 'preferred',
        subject: 'Live tonight at 8',
        body: 'Hi {{ subscriber.name }}, we go live tonight at 8 pm.',
      },
    ],
  });
/** A validated broadcast request (see {@link CreateBroadcastRequest}). */
export type CreateBroadcastRequest = z.infer<typeof CreateBroadcastRequest>;

/** A broadcast job (DESIGN D32). */
export const Broadcast = z
  .object({
    id: Uuid,
    project_id: Uuid,
    status: z.enum(BROADCAST_STATUSES),
    audience: BroadcastAudience,
    delivery: z.enum(MESSAGE_DELIVERIES),
    subject: z.string(),
    counts: z
      .object({
        queued: z.number().check(z.int(), z.gte(0), z.describe('Messages handed to the sender so far.')),
        sent: z.number().check(z.int(), z.gte(0), z.describe('Messages the channel accepted.')),
        failed: z.number().check(z.int(), z.gte(0), z.describe('Messages that failed for good.')),
        skipped: z
          .number()
          .check(
            z.int(),
            z.gte(0),
            z.describe('Recipients not sent to: no consent, opted out, or no channel to reach them through.'),
          ),
      })
      .check(z.describe('Progress; read it again while `status` is running.')),
    created_at: Timestamp,
    completed_at: z.nullable(Timestamp),
  })
  .register(z.globalRegistry, { id: 'Broadcast' });
/** A broadcast job (see {@link Broadcast}). */
export type Broadcast = z.infer<typeof Broadcast>;

/** A page of broadcasts, newest first. */
export const BroadcastList = listOf(Broadcast, 'BroadcastList');

/** `{project_id}` path parameters of the broadcasts. */
export const BroadcastProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project of the broadcasts.')),
});

/** `{project_id}/{id}` path parameters of one broadcast. */
export const BroadcastIdParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project of the broadcast.')),
  id: Uuid.check(z.describe('The broadcast id.')),
});
