import * as z from '../../schemas/zod.js';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';
import { CreateSubscriberRequest, Subscriber } from '../subscribers/schema.js';
import { Subscription } from '../subscriptions/schema.js';
import { MAX_ACCESS_DAYS } from '../plans/schema.js';

/** Access code statuses (DESIGN D18; a closed list, written once). */
const ACCESS_CODE_STATUSES = ['active', 'exhausted', 'expired', 'revoked'] as const;
/** An access code status. */
export type AccessCodeStatus = (typeof ACCESS_CODE_STATUSES)[number];

/** What redeeming a code gives (DESIGN D18; a closed list, written once). */
const ACCESS_CODE_EFFECTS = ['free_access', 'trial'] as const;
/** An access code effect. */
export type AccessCodeEffect = (typeof ACCESS_CODE_EFFECTS)[number];

/** Most codes in one batch (DESIGN D18). */
const MAX_BATCH_SIZE = 1000;
/** Characters of the code shown by reads (`code_suffix`). */
export const CODE_SUFFIX_LENGTH = 4;

/**
 * An access code as reads return it and events carry it (DESIGN D18). The redeemable code itself is
 * shown once, in the response that generated it; afterwards only its last {@link CODE_SUFFIX_LENGTH}
 * characters (`code_suffix`). `status` is computed at read time: a code whose `expires_at` has passed
 * reads `expired` even before the deadline worker records it.
 */
export const AccessCode = z
  .object({
    id: Uuid,
    project_id: Uuid,
    batch_id: Uuid.check(z.describe('The batch the code was generated in.')),
    plan_id: Uuid.check(z.describe('The plan a redemption subscribes to.')),
    code_suffix: z
      .string()
      .check(
        z.describe(
          `The last ${CODE_SUFFIX_LENGTH} characters of the code, for display (the code itself is shown only at generation).`,
        ),
      ),
    effect: z
      .enum(ACCESS_CODE_EFFECTS)
      .check(z.describe('free_access: the plan without payment; trial: a trial of the plan.')),
    access_days: z
      .nullable(z.number().check(z.int(), z.positive()))
      .check(z.describe('Days of access a redemption grants; null = the plan’s own period.')),
    max_redemptions: z
      .nullable(z.number().check(z.int(), z.positive()))
      .check(z.describe('How many times the code can be redeemed; null = unlimited.')),
    times_redeemed: z.number().check(z.int(), z.nonnegative()),
    expires_at: z.nullable(Timestamp).check(z.describe('When the code stops being redeemable; null = never.')),
    status: z.enum(ACCESS_CODE_STATUSES),
    revoked_at: z.nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'AccessCode' });
/** An access code (see {@link AccessCode}). */
export type AccessCode = z.infer<typeof AccessCode>;

/** A page of access codes. */
export const AccessCodeList = listOf(AccessCode, 'AccessCodeList');

/** A batch of generated access codes: what its codes share, and how many there are (never the codes). */
export const AccessCodeBatch = z
  .object({
    id: Uuid,
    project_id: Uuid,
    plan_id: Uuid,
    count: z.number().check(z.int(), z.positive(), z.describe('Number of codes in the batch.')),
    prefix: z.nullable(z.string()).check(z.describe('The prefix every code of the batch starts with, or null.')),
    effect: z.enum(ACCESS_CODE_EFFECTS),
    access_days: z.nullable(z.number().check(z.int(), z.positive())),
    max_redemptions: z.nullable(z.number().check(z.int(), z.positive())),
    expires_at: z.nullable(Timestamp),
    created_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'AccessCodeBatch' });
/** An access code batch (see {@link AccessCodeBatch}). */
export type AccessCodeBatch = z.infer<typeof AccessCodeBatch>;

/** The answer of a generation: the batch and, this once, every code in clear. */
export const GeneratedAccessCodes = z
  .object({
    batch: AccessCodeBatch,
    codes: z
      .array(
        z.object({
          id: Uuid.check(z.describe('The access code id.')),
          code: z
            .string()
            .check(
              z.describe(
                'The code to hand out (shown only in this response; case-insensitive, dashes optional when redeemed).',
              ),
            ),
        }),
      )
      .check(z.describe('Every code of the batch, shown only in this response.')),
  })
  .register(z.globalRegistry, { id: 'GeneratedAccessCodes' });
/** See {@link GeneratedAccessCodes}. */
export type GeneratedAccessCodes = z.infer<typeof GeneratedAccessCodes>;

/**
 * Body of `POST /v1/projects/{project_id}/access-codes/batches` (with `project_id`, the `generate_access_codes` tool's
 * arguments).
 */
export const GenerateAccessCodesRequest = z
  .strictObject({
    plan_id: Uuid.check(z.describe('The plan a redeemed code subscribes to (a plan of the same project).')),
    count: z
      .number()
      .check(z.int(), z.gte(1), z.lte(MAX_BATCH_SIZE), z.describe(`Number of codes, 1 to ${MAX_BATCH_SIZE}.`)),
    prefix: z
      .optional(z.string().check(z.regex(/^[A-Za-z0-9]{1,12}$/, 'Use 1 to 12 letters or digits.')))
      .check(
        z.describe(
          'Optional prefix of every code, 1 to 12 letters or digits (stored upper case), e.g. SPRING → SPRING-7KQ4-M2XD-9HTP.',
        ),
      ),
    effect: z
      ._default(z.enum(ACCESS_CODE_EFFECTS), 'free_access')
      .check(z.describe('free_access (default): the plan without payment; trial: a trial of the plan.')),
    access_days: z
      ._default(z.nullable(z.number().check(z.int(), z.gte(1), z.lte(MAX_ACCESS_DAYS))), null)
      .check(
        z.describe(
          `Days of access a redemption grants, 1 to ${MAX_ACCESS_DAYS}; null or omitted = the plan’s own period.`,
        ),
      ),
    max_redemptions: z
      ._default(z.nullable(z.number().check(z.int(), z.gte(1), z.lte(1_000_000))), 1)
      .check(z.describe('How many times each code can be redeemed (default 1); null = unlimited.')),
    expires_at: z
      ._default(z.nullable(Timestamp), null)
      .check(z.describe('When unredeemed codes expire (ISO 8601 UTC, in the future); null or omitted = never.')),
  })
  .register(z.globalRegistry, { id: 'GenerateAccessCodesRequest' });

/**
 * Query of `GET /v1/projects/{project_id}/access-codes` (with `project_id`, the `list_access_codes` tool's arguments).
 */
export const ListAccessCodesQuery = z.extend(ListQuery, {
  batch_id: z.optional(Uuid).check(z.describe('Only codes of this batch.')),
  plan_id: z.optional(Uuid).check(z.describe('Only codes for this plan.')),
  status: z
    .optional(z.enum(ACCESS_CODE_STATUSES))
    .check(z.describe('Only codes with this status (expired includes codes whose expires_at has passed).')),
});

/** `{id}` path parameters of an access code. */
export const AccessCodeIdParams = z.strictObject({ id: Uuid.check(z.describe('The access code id.')) });

/** Longest code text accepted by a redemption (a prefix of up to 12, three groups of four, dashes and spaces). */
const MAX_PRESENTED_CODE_LENGTH = 64;

/**
 * Body of `POST /v1/projects/{project_id}/access-codes/redeem` (DESIGN D18): the code as the subscriber
 * typed it (case-insensitive; dashes and spaces ignored) and the subscriber who redeems it — exactly one
 * of `subscriber_id` (an existing subscriber of the project) or `subscriber` (a new one, the fields of
 * `POST /v1/projects/{project_id}/subscribers`).
 */
export const RedeemAccessCodeRequest = z
  .strictObject({
    code: z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(MAX_PRESENTED_CODE_LENGTH),
        z.describe(
          'The access code, case-insensitive; dashes and spaces are ignored (SPRING-7KQ4-M2XD-9HTP = spring7kq4m2xd9htp).',
        ),
      ),
    subscriber_id: z
      .optional(Uuid)
      .check(z.describe('An existing subscriber of the project who redeems the code (or give `subscriber`).')),
    subscriber: z
      .optional(CreateSubscriberRequest)
      .check(
        z.describe(
          'A new subscriber to create with the redemption, the fields of creating a subscriber (or give `subscriber_id`).',
        ),
      ),
  })
  .check(
    z.superRefine((body, context) => {
      if ((body.subscriber_id === undefined) === (body.subscriber === undefined)) {
        context.addIssue({
          code: 'custom',
          path: ['subscriber_id'],
          message: 'Give exactly one of subscriber_id (an existing subscriber) or subscriber (a new one).',
        });
      }
    }),
  )
  .register(z.globalRegistry, {
    id: 'RedeemAccessCodeRequest',
    examples: [{ code: 'SPRING-7KQ4-M2XD-9HTP', subscriber_id: '6f1c2f9e-3b1a-4d8e-9a57-2c4b8e1d0f3a' }],
    override: ({ jsonSchema }: { jsonSchema: Record<string, unknown> }) => {
      jsonSchema.oneOf = [{ required: ['subscriber_id'] }, { required: ['subscriber'] }];
    },
  });
/** A validated redemption (see {@link RedeemAccessCodeRequest}). */
export type RedeemAccessCodeRequest = z.infer<typeof RedeemAccessCodeRequest>;

/** The answer of a redemption: the code after it (times_redeemed, status), the subscriber and the new subscription. */
export const AccessCodeRedemption = z
  .object({
    access_code: AccessCode.check(
      z.describe('The code after the redemption (status exhausted when this was its last use).'),
    ),
    subscriber: Subscriber.check(
      z.describe('The subscriber who redeemed it (created by this redemption when `subscriber` was given).'),
    ),
    subscription: Subscription.check(z.describe('The subscription the redemption created (source access_code).')),
  })
  .register(z.globalRegistry, { id: 'AccessCodeRedemption' });
/** See {@link AccessCodeRedemption}. */
export type AccessCodeRedemption = z.infer<typeof AccessCodeRedemption>;
