import * as z from '../../schemas/zod.js';
import { listOf, ListQuery, LongText, NameText, Timestamp, Uuid } from '../../schemas/common.js';
import { Member } from '../members/schema.js';

/**
 * Subscriber shapes (D10, D12, D17); the webhook catalogue imports `Subscriber` from here. D10: `email` and `phone` are
 * present only when the subscriber consented AND the reader holds `project-user:view` (on payloads, the endpoint owner;
 * stripped by `redactPayload`); otherwise the keys are absent.
 */

/** Subscriber statuses (a closed list, written once): `banned` after `ban_subscriber` until unbanned. */
const SUBSCRIBER_STATUSES = ['active', 'banned'] as const;
/** A subscriber status. */
export type SubscriberStatus = (typeof SUBSCRIBER_STATUSES)[number];

/** Longest e-mail address accepted (RFC 5321 path limit). */
const MAX_EMAIL_LENGTH = 254;
/** Longest display name accepted. */
const MAX_DISPLAY_NAME_LENGTH = 200;
/** Longest platform user id accepted. */
const MAX_PLATFORM_USER_ID_LENGTH = 128;

const contactDescription =
  'Present only when the subscriber consented to contact data and the reader holds `project-user:view`.';

/** A subscriber of a project, as the API returns it and events carry it (DESIGN D17). */
export const Subscriber = z
  .object({
    id: Uuid,
    project_id: Uuid,
    display_name: z.nullable(z.string()).check(z.describe('The subscriber\u2019s name, or null.')),
    platform_user_id: z
      .nullable(z.string())
      .check(z.describe('The subscriber\u2019s id on the project\u2019s platform, or null when not known yet.')),
    email: z.optional(z.nullable(z.string())).check(z.describe(contactDescription)),
    phone: z.optional(z.nullable(z.string())).check(z.describe(contactDescription)),
    consent: z
      .boolean()
      .check(z.describe('Whether the subscriber consented to the creator seeing their contact data (e-mail, phone).')),
    provider_customer_id: z
      .nullable(z.string())
      .check(z.describe('The subscriber\u2019s customer id at the project\u2019s payment provider, or null.')),
    member_id: z
      .nullable(Uuid)
      .check(
        z.describe(
          'The subscriber\u2019s member (platform identity with the same `platform_user_id`), or null when they have none yet.',
        ),
      ),
    status: z.enum(SUBSCRIBER_STATUSES).check(z.describe('`banned` after `ban_subscriber` until unbanned.')),
    banned_at: z.nullable(Timestamp).check(z.describe('When the subscriber was banned, or null.')),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Subscriber' });
/** A subscriber (see {@link Subscriber}). */
export type Subscriber = z.infer<typeof Subscriber>;

/** A page of subscribers. */
export const SubscriberList = listOf(Subscriber, 'SubscriberList');

/** A subscriber's e-mail address (also what a checkout pre-fills, D26). */
export const Email = z.email().check(z.maxLength(MAX_EMAIL_LENGTH));
// No trimming: the pattern itself refuses leading and trailing spaces, so the document states exactly what is accepted.
const Phone = z
  .string()
  .check(
    z.regex(
      /^\+?[0-9][0-9 ()-]{2,29}[0-9)]$/,
      'Expected a phone number (digits, optionally a leading + and spaces, dashes or parentheses; no spaces at either end).',
    ),
    z.meta({ examples: ['+15550100'] }),
  );
const DisplayName = NameText(MAX_DISPLAY_NAME_LENGTH);
const PlatformUserId = z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_PLATFORM_USER_ID_LENGTH));
const ProviderCustomerId = z.string().check(z.trim(), z.minLength(1), z.maxLength(255));

/** `{id}` path parameters of a subscriber. */
export const SubscriberIdParams = z.strictObject({ id: Uuid.check(z.describe('The subscriber id.')) });

/** `{project_id}` path parameters of a project's subscribers. */
export const SubscriberProjectParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project the subscribers belong to.')),
});

/** Body of `POST /v1/projects/{project_id}/subscribers` (a creator's own import or site). */
export const CreateSubscriberRequest = z
  .strictObject({
    display_name: z
      .optional(DisplayName)
      .check(z.describe(`The subscriber\u2019s name, 1 to ${MAX_DISPLAY_NAME_LENGTH} characters.`)),
    email: z
      .optional(Email)
      .check(z.describe('The subscriber\u2019s e-mail address (shown to the creator only with `consent`).')),
    phone: z
      .optional(Phone)
      .check(z.describe('The subscriber\u2019s phone number (shown to the creator only with `consent`).')),
    consent: z
      ._default(z.boolean(), false)
      .check(z.describe('Whether the subscriber consented to the creator seeing their contact data (default false).')),
    platform_user_id: z
      .optional(PlatformUserId)
      .check(
        z.describe(
          'The subscriber\u2019s id on the project\u2019s platform; unique per project, links the subscriber to that member.',
        ),
      ),
    provider_customer_id: z
      .optional(ProviderCustomerId)
      .check(z.describe('The subscriber\u2019s customer id at the project\u2019s payment provider.')),
  })
  .register(z.globalRegistry, { id: 'CreateSubscriberRequest' });
/** A validated subscriber creation (see {@link CreateSubscriberRequest}). */
export type CreateSubscriberRequest = z.infer<typeof CreateSubscriberRequest>;

/** Body of `POST /v1/subscribers/{id}`: every field optional; null clears an optional field. */
export const UpdateSubscriberRequest = z
  .strictObject({
    display_name: z.optional(z.nullable(DisplayName)).check(z.describe('New name; null clears it.')),
    email: z.optional(z.nullable(Email)).check(z.describe('New e-mail address; null clears it.')),
    phone: z.optional(z.nullable(Phone)).check(z.describe('New phone number; null clears it.')),
    consent: z
      .optional(z.boolean())
      .check(z.describe('Whether the subscriber consents to the creator seeing their contact data.')),
    platform_user_id: z
      .optional(z.nullable(PlatformUserId))
      .check(z.describe('The subscriber\u2019s id on the platform; null unlinks it. Unique per project.')),
    provider_customer_id: z
      .optional(z.nullable(ProviderCustomerId))
      .check(z.describe('The customer id at the payment provider; null clears it.')),
  })
  .register(z.globalRegistry, { id: 'UpdateSubscriberRequest' });
/** A validated subscriber update (see {@link UpdateSubscriberRequest}). */
export type UpdateSubscriberRequest = z.infer<typeof UpdateSubscriberRequest>;

/**
 * Query of `GET /v1/projects/{project_id}/subscribers` (and the `list_subscribers` tool's arguments besides
 * `project_id`).
 */
export const ListSubscribersQuery = z.extend(ListQuery, {
  status: z.optional(z.enum(SUBSCRIBER_STATUSES)).check(z.describe('Only subscribers with this status.')),
  plan_id: z.optional(Uuid).check(z.describe('Only subscribers with a live subscription to this plan.')),
  email_prefix: z
    .optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_EMAIL_LENGTH)))
    .check(z.describe('Only subscribers whose e-mail address starts with this text (case-insensitive).')),
});
/** A validated subscriber list query (see {@link ListSubscribersQuery}). */
export type ListSubscribersQuery = z.infer<typeof ListSubscribersQuery>;

/** Query of `GET /v1/projects/{project_id}/subscribers/export`. */
export const ExportSubscribersQuery = z.extend(ListQuery, {
  limit: z
    ._default(z.number().check(z.int(), z.gte(1), z.lte(1000)), 500)
    .check(z.describe('Subscribers per page, 1 to 1000 (default 500).')),
});
/** A validated export query (see {@link ExportSubscribersQuery}). */
export type ExportSubscribersQuery = z.infer<typeof ExportSubscribersQuery>;

/**
 * One page of a subscriber export (`project-user:export`): `lines` is NDJSON, one `Subscriber` per line
 * (each ends with `\n`; contact data only for consented subscribers), in the list's order.
 */
export const SubscriberExportPage = z
  .object({
    lines: z
      .string()
      .check(
        z.describe(
          'NDJSON: one Subscriber JSON object per line, each line ending with a newline; empty on an empty page.',
        ),
      ),
    count: z.number().check(z.int(), z.nonnegative(), z.describe('How many lines this page holds.')),
    next_cursor: z
      .nullable(z.string())
      .check(z.describe('Pass as `cursor` to get the next page; null on the last page.')),
  })
  .register(z.globalRegistry, { id: 'SubscriberExportPage' });
/** An export page (see {@link SubscriberExportPage}). */
export type SubscriberExportPage = z.infer<typeof SubscriberExportPage>;

/**
 * Body of `POST /v1/subscribers/{id}/ban` and `/kick` (and the `ban_subscriber` / `kick_subscriber` arguments besides
 * `id`).
 */
export const RemoveSubscriberRequest = z
  .strictObject({
    reason: z
      .optional(LongText(500, 1))
      .check(z.describe('Why, up to 500 characters; carried by the `member.banned` / `member.kicked` event.')),
  })
  .register(z.globalRegistry, { id: 'RemoveSubscriberRequest' });
/** A validated ban or kick (see {@link RemoveSubscriberRequest}). */
export type RemoveSubscriberRequest = z.infer<typeof RemoveSubscriberRequest>;

/**
 * The answer of ban, unban and kick: the subscriber after the change and their member (null when the
 * subscriber has no platform user id), whose `platform_error` says whether the platform call failed.
 */
export const SubscriberModeration = z
  .object({
    subscriber: Subscriber,
    member: z
      .nullable(Member)
      .check(
        z.describe(
          'The subscriber\u2019s member after the change, or null when the subscriber has no platform identity.',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'SubscriberModeration' });
/** A moderation result (see {@link SubscriberModeration}). */
export type SubscriberModeration = z.infer<typeof SubscriberModeration>;
