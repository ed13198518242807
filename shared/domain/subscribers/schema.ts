import * as z from 'zod';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';
import { Member } from '../members/schema.js';

/**
 * The subscriber's shapes (DESIGN D10, D12, D17): what reads return and events carry (`Subscriber`) and
 * the requests. A subscriber is the billing identity within a project (name, contact data with the
 * subscriber's `consent`, provider customer id); the platform identity is the member (`members/`).
 * The webhook catalogue imports `Subscriber` from here, so the payload shape is this one definition.
 *
 * Contact data (D10): `email` and `phone` are present only when the subscriber consented AND the reader
 * may see them (`project-user:view` on reads; the endpoint owner's `project-user:view` on webhook
 * payloads, stripped by the fan-out's `redactPayload`). Otherwise the keys are absent.
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

const contactDescription = 'Present only when the subscriber consented to contact data and the reader holds `project-user:view`.';

/** A subscriber of a project, as the API returns it and events carry it (DESIGN D17). */
export const Subscriber = z
  .object({
    id: Uuid,
    project_id: Uuid,
    display_name: z.string().nullable().describe('The subscriber\u2019s name, or null.'),
    platform_user_id: z.string().nullable().describe('The subscriber\u2019s id on the project\u2019s platform, or null when not known yet.'),
    email: z.string().nullable().optional().describe(contactDescription),
    phone: z.string().nullable().optional().describe(contactDescription),
    consent: z.boolean().describe('Whether the subscriber consented to the creator seeing their contact data (e-mail, phone).'),
    provider_customer_id: z.string().nullable().describe('The subscriber\u2019s customer id at the project\u2019s payment provider, or null.'),
    member_id: Uuid.nullable().describe('The subscriber\u2019s member (platform identity with the same `platform_user_id`), or null when they have none yet.'),
    status: z.enum(SUBSCRIBER_STATUSES).describe('`banned` after `ban_subscriber` until unbanned.'),
    banned_at: Timestamp.nullable().describe('When the subscriber was banned, or null.'),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .meta({ id: 'Subscriber' });
/** A subscriber (see {@link Subscriber}). */
export type Subscriber = z.infer<typeof Subscriber>;

/** A page of subscribers. */
export const SubscriberList = listOf(Subscriber, 'SubscriberList');

const Email = z.email().max(MAX_EMAIL_LENGTH);
// No trimming: the pattern itself refuses leading and trailing spaces, so the document states exactly what is accepted.
const Phone = z
  .string()
  .regex(/^\+?[0-9][0-9 ()-]{2,29}[0-9)]$/, 'Expected a phone number (digits, optionally a leading + and spaces, dashes or parentheses; no spaces at either end).')
  .meta({ examples: ['+15550100'] });
const DisplayName = z.string().trim().min(1).max(MAX_DISPLAY_NAME_LENGTH);
const PlatformUserId = z.string().trim().min(1).max(MAX_PLATFORM_USER_ID_LENGTH);
const ProviderCustomerId = z.string().trim().min(1).max(255);

/** `{id}` path parameters of a subscriber. */
export const SubscriberIdParams = z.object({ id: Uuid.describe('The subscriber id.') }).strict();

/** `{project_id}` path parameters of a project's subscribers. */
export const SubscriberProjectParams = z.object({ project_id: Uuid.describe('The project the subscribers belong to.') }).strict();

/** Body of `POST /v1/projects/{project_id}/subscribers` (a creator's own import or site). */
export const CreateSubscriberRequest = z
  .object({
    display_name: DisplayName.optional().describe(`The subscriber\u2019s name, 1 to ${MAX_DISPLAY_NAME_LENGTH} characters.`),
    email: Email.optional().describe('The subscriber\u2019s e-mail address (shown to the creator only with `consent`).'),
    phone: Phone.optional().describe('The subscriber\u2019s phone number (shown to the creator only with `consent`).'),
    consent: z.boolean().default(false).describe('Whether the subscriber consented to the creator seeing their contact data (default false).'),
    platform_user_id: PlatformUserId.optional().describe('The subscriber\u2019s id on the project\u2019s platform; unique per project, links the subscriber to that member.'),
    provider_customer_id: ProviderCustomerId.optional().describe('The subscriber\u2019s customer id at the project\u2019s payment provider.'),
  })
  .strict()
  .meta({ id: 'CreateSubscriberRequest' });
/** A validated subscriber creation (see {@link CreateSubscriberRequest}). */
export type CreateSubscriberRequest = z.infer<typeof CreateSubscriberRequest>;

/** Body of `POST /v1/subscribers/{id}`: every field optional; null clears an optional field. */
export const UpdateSubscriberRequest = z
  .object({
    display_name: DisplayName.nullable().optional().describe('New name; null clears it.'),
    email: Email.nullable().optional().describe('New e-mail address; null clears it.'),
    phone: Phone.nullable().optional().describe('New phone number; null clears it.'),
    consent: z.boolean().optional().describe('Whether the subscriber consents to the creator seeing their contact data.'),
    platform_user_id: PlatformUserId.nullable().optional().describe('The subscriber\u2019s id on the platform; null unlinks it. Unique per project.'),
    provider_customer_id: ProviderCustomerId.nullable().optional().describe('The customer id at the payment provider; null clears it.'),
  })
  .strict()
  .meta({ id: 'UpdateSubscriberRequest' });
/** A validated subscriber update (see {@link UpdateSubscriberRequest}). */
export type UpdateSubscriberRequest = z.infer<typeof UpdateSubscriberRequest>;

/** Query of `GET /v1/projects/{project_id}/subscribers` (and the `list_subscribers` tool's arguments besides `project_id`). */
export const ListSubscribersQuery = ListQuery.extend({
  status: z.enum(SUBSCRIBER_STATUSES).optional().describe('Only subscribers with this status.'),
  plan_id: Uuid.optional().describe('Only subscribers with a live subscription to this plan.'),
  email_prefix: z.string().trim().min(1).max(MAX_EMAIL_LENGTH).optional().describe('Only subscribers whose e-mail address starts with this text (case-insensitive).'),
}).strict();
/** A validated subscriber list query (see {@link ListSubscribersQuery}). */
export type ListSubscribersQuery = z.infer<typeof ListSubscribersQuery>;

/** Query of `GET /v1/projects/{project_id}/subscribers/export`. */
export const ExportSubscribersQuery = ListQuery.extend({
  limit: z.number().int().min(1).max(1000).default(500).describe('Subscribers per page, 1 to 1000 (default 500).'),
}).strict();
/** A validated export query (see {@link ExportSubscribersQuery}). */
export type ExportSubscribersQuery = z.infer<typeof ExportSubscribersQuery>;

/**
 * One page of a subscriber export (`project-user:export`): `lines` is NDJSON, one `Subscriber` per line
 * (each ends with `\n`; contact data only for consented subscribers), in the list's order.
 */
export const SubscriberExportPage = z
  .object({
    lines: z.string().describe('NDJSON: one Subscriber JSON object per line, each line ending with a newline; empty on an empty page.'),
    count: z.number().int().nonnegative().describe('How many lines this page holds.'),
    next_cursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .meta({ id: 'SubscriberExportPage' });
/** An export page (see {@link SubscriberExportPage}). */
export type SubscriberExportPage = z.infer<typeof SubscriberExportPage>;

/** Body of `POST /v1/subscribers/{id}/ban` and `/kick` (and the `ban_subscriber` / `kick_subscriber` arguments besides `id`). */
export const RemoveSubscriberRequest = z
  .object({
    reason: z.string().trim().min(1).max(500).optional().describe('Why, up to 500 characters; carried by the `member.banned` / `member.kicked` event.'),
  })
  .strict()
  .meta({ id: 'RemoveSubscriberRequest' });
/** A validated ban or kick (see {@link RemoveSubscriberRequest}). */
export type RemoveSubscriberRequest = z.infer<typeof RemoveSubscriberRequest>;

/**
 * The answer of ban, unban and kick: the subscriber after the change and their member (null when the
 * subscriber has no platform user id), whose `platform_error` says whether the platform call failed.
 */
export const SubscriberModeration = z
  .object({
    subscriber: Subscriber,
    member: Member.nullable().describe('The subscriber\u2019s member after the change, or null when the subscriber has no platform identity.'),
  })
  .meta({ id: 'SubscriberModeration' });
/** A moderation result (see {@link SubscriberModeration}). */
export type SubscriberModeration = z.infer<typeof SubscriberModeration>;
