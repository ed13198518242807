import { SUBSCRIPTION_STATUS_VALUES } from '../../catalogues/subscription-statuses.js';
import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import { Timestamp, Uuid } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';

/**
 * The subscriber side's internal operations (DESIGN D27, D35): the portal's sign-in with a one-time link (public: the
 * link is the credential), its sign-out and "Update payment method", and the bot commands that answer with a portal
 * link. No route, no tool; run by `invokeOperation` with surface
 * `portal`. All are exempt from the billing lockdown (D20: the subscriber side keeps running on a locked team).
 */
export const portalSessionsInternalOperations = {
  signInToPortal: defineInternalOperation({
    id: 'signInToPortal',
    summary: 'Open a portal session with a one-time portal link (its token is the credential).',
    tag: 'Subscribers',
    ability: null,
    teamWide: false,
    body: z.strictObject({ project_id: Uuid, token: z.string().check(z.maxLength(200)) }),
    output: z.object({ session_cookie: z.string() }),
    events: [],
    write: true,
  }),
  signOutOfPortal: defineInternalOperation({
    id: 'signOutOfPortal',
    summary: 'End the subscriber’s portal session (sign-out).',
    tag: 'Subscribers',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({ session_cookie: z.string().check(z.maxLength(200)) }),
    output: z.object({ signed_out: z.literal(true) }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  openBillingPortal: defineInternalOperation({
    id: 'openBillingPortal',
    summary:
      'Open a Stripe Billing Portal session for the subscriber of a Stripe-billed subscription ("Update payment method").',
    tag: 'Subscriptions',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({ subscription_id: Uuid, return_url: z.url() }),
    output: z.object({ url: z.string() }),
    events: [],
    write: true,
    lockdown: 'exempt',
    callsProvider: true,
  }),
  answerMembershipCommand: defineInternalOperation({
    id: 'answerMembershipCommand',
    summary:
      'The bot command of a platform user (Telegram `/account`, Discord `/membership`): their membership’s status and a one-time portal link.',
    tag: 'Subscribers',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({ project_id: Uuid, platform_user_id: z.string().check(z.minLength(1), z.maxLength(64)) }),
    output: z.object({
      found: z.boolean(),
      status: z.nullable(z.enum(SUBSCRIPTION_STATUS_VALUES)),
      url: z.nullable(z.string()),
      expires_at: z.nullable(Timestamp),
    }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
};
