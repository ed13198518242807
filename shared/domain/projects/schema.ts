import * as z from '../../schemas/zod.js';
import { CONNECTABLE_PAYMENT_PROVIDERS, PAYMENT_PROVIDER_VALUES } from '../../catalogues/payment-providers.js';
import {
  CREATE_PROJECT_PLATFORM_TYPES,
  PLATFORM_RESOURCE_KINDS,
  PLATFORM_TYPE_VALUES,
} from '../../catalogues/platform-types.js';
import { STRIPE_SECRET_KEY_PATTERN, STRIPE_WEBHOOK_SECRET_PATTERN } from '../../providers/stripe-keys.js';
import { listOf, ListQuery, LongText, NameText, Timestamp, Uuid } from '../../schemas/common.js';

/**
 * The project's shapes (DESIGN D12, D16, D22): what reads return and events carry (`Project`, with its
 * bot, payment-provider connection and linked resources, never a credential) and the requests. The
 * REST bodies and the tool arguments are the same schemas (DESIGN D13); the webhook catalogue imports
 * `Project` and `ProjectResource` from here, so the payload shape is this one definition.
 */

/**
 * Every IANA time zone name the service accepts: the runtime's canonical zones (`Intl.supportedValuesOf`), plus `UTC`
 * and the fixed `Etc/` zones it leaves out. Names only, never UTC offsets.
 */
const TIME_ZONES = [
  ...new Set([
    'UTC',
    'Etc/UTC',
    ...Array.from({ length: 27 }, (_, index) => index - 14)
      .filter((offset) => offset !== 0)
      .map((offset) => `Etc/GMT${offset > 0 ? '+' : '-'}${Math.abs(offset)}`)
      .filter((name) => {
        try {
          new Intl.DateTimeFormat('en', { timeZone: name });
          return true;
        } catch {
          return false;
        }
      }),
    ...Intl.supportedValuesOf('timeZone'),
  ]),
] as [string, ...string[]];

const TIME_ZONE_SET: ReadonlySet<string> = new Set(TIME_ZONES);

/** True when `name` is one of the IANA time zone names the service accepts (`Europe/Berlin`, `UTC`). */
export function isTimeZone(name: string): boolean {
  return TIME_ZONE_SET.has(name);
}

/**
 * A project's time zone (DESIGN D32): an IANA name; dates in messages to its subscribers are shown in it. An enum
 * rather than a refinement, so `openapi.json` lists exactly the names the service accepts.
 */
const TimeZone = z
  .enum(TIME_ZONES, { error: 'Expected an IANA time zone name, e.g. Europe/Berlin or UTC.' })
  .check(
    z.describe('IANA time zone name (e.g. `Europe/Berlin`); dates in messages to subscribers are shown in it.'),
    z.meta({ examples: ['Europe/Berlin'] }),
  );

/** The time zone of a project that never chose one. */
export const DEFAULT_TIME_ZONE = 'UTC';

/** Project statuses (a closed list, written once). */
const PROJECT_STATUSES = ['active', 'archived'] as const;
/** A project status. */
export type ProjectStatus = (typeof PROJECT_STATUSES)[number];

/** Most resources one project can link (they live in the project item; also bounds the delete transaction). */
export const MAX_RESOURCES_PER_PROJECT = 50;
/** Most platform permissions a bot's connection records. */
export const MAX_BOT_PERMISSIONS = 100;

/** The project's community bot: public identifiers and the permissions it holds, never its platform token. */
export const ProjectBot = z
  .object({
    platform_type: z
      .enum(PLATFORM_TYPE_VALUES)
      .check(z.describe('The platform the bot lives on (the project\u2019s platform).')),
    platform_bot_id: z.string().check(z.describe('The bot\u2019s account id on the platform.')),
    username: z.nullable(z.string()).check(z.describe('The bot\u2019s username on the platform, if it has one.')),
    permissions: z.array(z.string()).check(z.describe('Platform permissions the bot currently holds, sorted.')),
    connected_at: z.nullable(Timestamp).check(z.describe('When this bot was connected.')),
  })
  .register(z.globalRegistry, { id: 'ProjectBot' });
/** A project's bot (see {@link ProjectBot}). */
export type ProjectBot = z.infer<typeof ProjectBot>;

/**
 * The project's payment-provider connection state (DESIGN D16): which provider, since when, and for Stripe
 * whether its key is a live-mode one; never its credentials (Stripe's keys are write-only).
 */
export const ProjectPaymentProvider = z
  .object({
    provider: z
      .enum(PAYMENT_PROVIDER_VALUES)
      .check(z.describe('The connected provider (see service://enums/payment-provider).')),
    connected_at: Timestamp.check(z.describe('When it was connected.')),
    livemode: z
      .nullable(z.boolean())
      .check(
        z.describe(
          'Stripe: true when the connected key is a live-mode key, false for test mode; null for providers without modes (manual).',
        ),
      ),
  })
  .register(z.globalRegistry, { id: 'ProjectPaymentProvider' });
/** A project's payment-provider connection (see {@link ProjectPaymentProvider}). */
export type ProjectPaymentProvider = z.infer<typeof ProjectPaymentProvider>;

/** A platform resource (channel, group, server, role…) linked to a project. */
export const ProjectResource = z
  .object({
    id: Uuid.check(z.describe('The link\u2019s id (stable for a given project, kind and platform resource id).')),
    project_id: Uuid,
    kind: z.enum(PLATFORM_RESOURCE_KINDS).check(z.describe('What the resource is on the platform.')),
    platform_resource_id: z.string().check(z.describe('The resource id on the platform.')),
    name: z.nullable(z.string()).check(z.describe('A display name, if given.')),
    linked_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'ProjectResource' });
/** A linked resource (see {@link ProjectResource}). */
export type ProjectResource = z.infer<typeof ProjectResource>;

/** A creator's project (one community on one platform), as the API returns it and events carry it. */
export const Project = z
  .object({
    id: Uuid,
    name: z.string(),
    platform_type: z.enum(PLATFORM_TYPE_VALUES),
    description: z.nullable(z.string()),
    status: z
      .enum(PROJECT_STATUSES)
      .check(z.describe('`archived` projects refuse new bots, resources, providers and plans until unarchived.')),
    bot: z.nullable(ProjectBot).check(z.describe('The connected community bot, or null.')),
    payment_provider: z.nullable(ProjectPaymentProvider).check(z.describe('The connected payment provider, or null.')),
    resources: z.array(ProjectResource).check(z.describe('Linked platform resources, in link order.')),
    time_zone: TimeZone.check(z.describe('IANA time zone of the dates in messages to subscribers (default `UTC`).')),
    archived_at: z.nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Project' });
/** A project (see {@link Project}). */
export type Project = z.infer<typeof Project>;

/** A page of projects. */
export const ProjectList = listOf(Project, 'ProjectList');

/** `{project_id}` path parameters. */
export const ProjectIdParams = z.strictObject({ project_id: Uuid.check(z.describe('The project id.')) });

/** `{project_id}` and `{resource_id}` path parameters of a linked resource. */
export const ProjectResourceParams = z.strictObject({
  project_id: Uuid.check(z.describe('The project id.')),
  resource_id: Uuid.check(
    z.describe('The linked resource\u2019s id (`id` of an entry of the project\u2019s `resources`).'),
  ),
});

const ProjectName = NameText();
const ProjectDescription = LongText();

/** Body of `POST /v1/projects` (and the `create_project` tool's arguments). */
export const CreateProjectRequest = z
  .strictObject({
    name: ProjectName.check(z.describe('Project name, 1 to 100 characters.')),
    platform_type: z
      .enum(CREATE_PROJECT_PLATFORM_TYPES)
      .check(z.describe('The community platform (see service://enums/platform-type, create_project_accepts).')),
    description: z.optional(ProjectDescription).check(z.describe('Optional description, up to 1000 characters.')),
    time_zone: z
      .optional(TimeZone)
      .check(z.describe('IANA time zone of the dates in messages to subscribers (default `UTC`).')),
  })
  .register(z.globalRegistry, { id: 'CreateProjectRequest' });

/** Body of `POST /v1/projects/{project_id}` (and the `update_project` tool's arguments besides `project_id`). */
export const UpdateProjectRequest = z
  .strictObject({
    name: z.optional(ProjectName).check(z.describe('New name, 1 to 100 characters.')),
    description: z
      .optional(z.nullable(ProjectDescription))
      .check(z.describe('New description, up to 1000 characters; null clears it.')),
    time_zone: z.optional(TimeZone).check(z.describe('New IANA time zone of the dates in messages to subscribers.')),
  })
  .register(z.globalRegistry, { id: 'UpdateProjectRequest' });
/** A validated project update (see {@link UpdateProjectRequest}). */
export type UpdateProjectRequest = z.infer<typeof UpdateProjectRequest>;

/** Query of `GET /v1/projects` (and the `list_projects` tool's arguments). */
export const ListProjectsQuery = z.extend(ListQuery, {
  status: z.optional(z.enum(PROJECT_STATUSES)).check(z.describe('Only projects with this status.')),
});

/**
 * Body of `PUT /v1/projects/{project_id}/bot` (D22, D28): Telegram takes the @BotFather token; Discord also
 * `application_id`, `public_key`, `client_secret`. One object (a tool input), checked per platform by the use case.
 * Secrets are stored encrypted, never returned or logged.
 */
export const ConnectBotRequest = z
  .strictObject({
    platform: z
      .optional(z.enum(['telegram', 'discord']))
      .check(
        z.describe(
          'The project’s platform (default telegram); `discord` needs `application_id`, `public_key` and `client_secret` too.',
        ),
      ),
    token: z
      .string()
      .check(
        z.trim(),
        z.regex(
          /^(?:\d{1,20}:[A-Za-z0-9_-]{20,100}|[A-Za-z0-9_-]{20,100}\.[A-Za-z0-9_-]{4,40}\.[A-Za-z0-9_-]{20,100})$/,
          'Expected a Telegram bot token (<bot id>:<secret>, as @BotFather gives it) or a Discord bot token (from the Developer Portal).',
        ),
        z.describe(
          'The bot’s token (Telegram: `<bot id>:<secret>` from @BotFather; Discord: the bot token of the Developer Portal). Write-only: stored encrypted, never returned.',
        ),
        z.meta({ examples: ['110201543:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw'] }),
      ),
    application_id: z
      .optional(z.string().check(z.trim(), z.regex(/^\d{15,25}$/, 'Expected a Discord application id (a snowflake).')))
      .check(z.describe('discord only, required: the application id.'), z.meta({ examples: ['112233445566778899'] })),
    public_key: z
      .optional(
        z
          .string()
          .check(
            z.trim(),
            z.regex(/^[0-9a-fA-F]{64}$/, 'Expected the application’s public key (64 hexadecimal characters).'),
          ),
      )
      .check(
        z.describe(
          'discord only, required: the application’s public key (verifies interactions at /hooks/discord/{project_id}).',
        ),
        z.meta({ examples: ['1dce32b3674efcdfb834a0f7c25d413b24da1e346a51691b2256bbfd1c70f11a'] }),
      ),
    client_secret: z
      .optional(
        z
          .string()
          .check(
            z.trim(),
            z.regex(/^\S{8,200}$/, 'Expected the application’s OAuth2 client secret: 8 to 200 characters, no spaces.'),
          ),
      )
      .check(
        z.describe(
          'discord only, required: the OAuth2 client secret (account linking). Write-only: stored encrypted, never returned.',
        ),
        z.meta({ examples: ['Xo3vJq9TcW1mZr7LbN5sKd2HfG8yPa4E'] }),
      ),
  })
  .register(z.globalRegistry, { id: 'ConnectBotRequest' });
/** A validated bot connection (see {@link ConnectBotRequest}). */
export type ConnectBotRequest = z.infer<typeof ConnectBotRequest>;

/** Body of `POST /v1/projects/{project_id}/resources`. */
export const LinkResourceRequest = z
  .strictObject({
    kind: z
      .enum(PLATFORM_RESOURCE_KINDS)
      .check(
        z.describe(
          'What the resource is; the project\u2019s platform lists the kinds it accepts (service://enums/platform-type, resource_kinds).',
        ),
      ),
    platform_resource_id: z
      .string()
      .check(
        z.trim(),
        z.minLength(1),
        z.maxLength(256),
        z.describe('The resource id on the platform (e.g. a Telegram chat id, a Discord role id).'),
      ),
    name: z.optional(NameText()).check(z.describe('Optional display name, 1 to 100 characters.')),
  })
  .register(z.globalRegistry, { id: 'LinkResourceRequest' });
/** A validated resource link (see {@link LinkResourceRequest}). */
export type LinkResourceRequest = z.infer<typeof LinkResourceRequest>;

/**
 * Body of `PUT /v1/projects/{project_id}/payment-provider` (DESIGN D16). `stripe` needs both
 * `secret_key` and `webhook_secret` (checked with Stripe, stored encrypted, never returned or logged);
 * `manual` takes neither. Which fields a provider needs is checked by the use case
 * (`shared/domain/projects/payment-provider.ts`), so REST and the tool server refuse alike, naming them.
 */
export const ConnectPaymentProviderRequest = z
  .strictObject({
    // Only the connectable providers (an enum, not a refinement, so openapi.json lists exactly these).
    provider: z
      .enum(CONNECTABLE_PAYMENT_PROVIDERS, {
        error: `This provider cannot be connected yet; connectable providers: ${CONNECTABLE_PAYMENT_PROVIDERS.join(', ')}.`,
      })
      .check(
        z.describe(
          `The provider to connect (see service://enums/payment-provider; only connectable ones: ${CONNECTABLE_PAYMENT_PROVIDERS.join(', ')}).`,
        ),
      ),
    secret_key: z
      .optional(
        z
          .string()
          .check(
            z.trim(),
            z.regex(
              STRIPE_SECRET_KEY_PATTERN,
              'Expected a Stripe restricted key (rk_test_... or rk_live_...) or secret key (sk_...).',
            ),
          ),
      )
      .check(
        z.describe(
          'stripe only, required: a restricted API key (`rk_...`; a secret key `sk_...` works too) with the permissions docs/integrations.md lists (Products, Prices and Refunds: Write). Write-only: checked with Stripe, stored encrypted, never returned.',
        ),
        z.meta({ examples: ['rk_test_51Hx0000000000000000000000'] }),
      ),
    webhook_secret: z
      .optional(
        z
          .string()
          .check(
            z.trim(),
            z.regex(STRIPE_WEBHOOK_SECRET_PATTERN, 'Expected a Stripe webhook signing secret (whsec_...).'),
          ),
      )
      .check(
        z.describe(
          'stripe only, required: the signing secret (`whsec_...`) of the Stripe webhook endpoint pointed at `/hooks/stripe/{project_id}`. Write-only: stored encrypted, never returned.',
        ),
        z.meta({ examples: ['whsec_0000000000000000000000000000'] }),
      ),
  })
  .register(z.globalRegistry, { id: 'ConnectPaymentProviderRequest' });
/** A validated provider connection (see {@link ConnectPaymentProviderRequest}). */
export type ConnectPaymentProviderRequest = z.infer<typeof ConnectPaymentProviderRequest>;
