import * as z from '../../schemas/zod.js';
import { MESSAGE_KIND_VALUES } from '../../catalogues/message-kinds.js';
import { LongText, NameText, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * The message templates' shapes (DESIGN D32): a template as reads return it (stored or default), the body of a change
 * and of a preview, and a preview's answer. The REST bodies and the tool arguments are the same schemas (D13).
 */

/** Longest e-mail subject of a template, in characters. */
export const MAX_SUBJECT_LENGTH = 200;
/** Longest body of a template (e-mail or bot), in characters. */
export const MAX_BODY_LENGTH = 10_000;

/**
 * How a message reaches a subscriber: `preferred` = the project's bot when the subscriber can be reached there, else
 * e-mail; `both` = every reachable channel.
 */
export const MESSAGE_DELIVERIES = ['preferred', 'both'] as const;

const Kind = z.enum(MESSAGE_KIND_VALUES).check(z.describe('The message kind (see service://enums/message-kind).'));
const Delivery = z
  .enum(MESSAGE_DELIVERIES)
  .check(
    z.describe(
      '`preferred`: the bot when the subscriber can be reached there, else e-mail; `both`: every reachable channel.',
    ),
  );
const Subject = NameText(MAX_SUBJECT_LENGTH).check(
  z.describe(`The e-mail subject: Liquid over the documented variables, 1 to ${MAX_SUBJECT_LENGTH} characters.`),
);
const Body = LongText(MAX_BODY_LENGTH, 1).check(
  z.describe(`Liquid over the documented variables (docs/messages.md), 1 to ${MAX_BODY_LENGTH} characters.`),
);

/** A template's e-mail part: subject and plain-text body (the HTML is made from the text). */
const EmailTemplate = z.strictObject({ subject: Subject, body: Body });
/** A template's bot part: the text of a direct message. */
const BotTemplate = z.strictObject({ body: Body });

/** The template of one message kind in a project, as the API returns it: the stored one or the default. */
export const MessageTemplate = z
  .object({
    kind: Kind,
    delivery: Delivery,
    email: z.object({ subject: z.string(), body: z.string() }),
    bot: z.object({ body: z.string() }),
    is_default: z.boolean().check(z.describe('True when the project uses the service\u2019s default text.')),
    updated_at: z.nullable(Timestamp).check(z.describe('When the creator last saved it; null for a default.')),
  })
  .register(z.globalRegistry, { id: 'MessageTemplate' });
/** A message template (see {@link MessageTemplate}). */
export type MessageTemplate = z.infer<typeof MessageTemplate>;

/** Every kind's template of a project, in catalogue order. */
export const MessageTemplateList = z
  .object({ data: z.array(MessageTemplate) })
  .register(z.globalRegistry, { id: 'MessageTemplateList' });

/** `{project_id}` path parameters of a project's templates. */
export const MessageTemplateProjectParams = z.strictObject({ project_id: Uuid.check(z.describe('The project id.')) });

/** `{project_id}` and `{kind}` path parameters of one template. */
export const MessageTemplateParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project id.')),
  kind: Kind,
});

/** Body of `PUT /v1/projects/{project_id}/message-templates/{kind}`: the whole template, validated by rendering it. */
export const PutMessageTemplateRequest = z
  .strictObject({
    delivery: Delivery,
    email: EmailTemplate,
    bot: BotTemplate,
  })
  .register(z.globalRegistry, { id: 'PutMessageTemplateRequest' });
/** A validated template change (see {@link PutMessageTemplateRequest}). */
export type PutMessageTemplateRequest = z.infer<typeof PutMessageTemplateRequest>;

/**
 * Body of `POST /v1/projects/{project_id}/message-templates/{kind}/preview`: texts to try (each part absent: the stored
 * or default one) and the subscriber to show it to (absent: a sample).
 */
export const PreviewMessageTemplateRequest = z
  .strictObject({
    email: z
      .optional(EmailTemplate)
      .check(z.describe('An e-mail subject and body to preview instead of the saved ones.')),
    bot: z.optional(BotTemplate).check(z.describe('A bot text to preview instead of the saved one.')),
    subscriber_id: z
      .optional(Uuid)
      .check(z.describe('A subscriber of the project to render for; default: a sample subscriber.')),
  })
  .register(z.globalRegistry, { id: 'PreviewMessageTemplateRequest' });
/** A validated preview request (see {@link PreviewMessageTemplateRequest}). */
export type PreviewMessageTemplateRequest = z.infer<typeof PreviewMessageTemplateRequest>;

/** A rendered template: the e-mail (subject, text, HTML) and the bot message (text). */
export const MessagePreview = z
  .object({
    kind: Kind,
    subscriber_id: z
      .nullable(Uuid)
      .check(z.describe('The subscriber it was rendered for; null for the sample subscriber.')),
    email: z.object({ subject: z.string(), text: z.string(), html: z.string() }),
    bot: z.object({ text: z.string() }),
  })
  .register(z.globalRegistry, { id: 'MessagePreview' });
/** A preview (see {@link MessagePreview}). */
export type MessagePreview = z.infer<typeof MessagePreview>;
