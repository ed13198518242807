import * as z from '../../schemas/zod.js';
import { ListQuery, Timestamp, Uuid, listOf } from '../../schemas/common.js';
import { RedirectUrl } from '../checkout-sessions/schema.js';
import { Email } from '../subscribers/schema.js';

/**
 * The shapes of gifts (DESIGN D33): a plan bought once (Stripe Checkout, mode `payment`) for someone else, delivered on
 * a date as a one-use access code (D18).
 */

/** A gift's life: bought (`pending_payment` until Stripe reports the payment), `paid`, `delivered`, or `canceled`. */
const GIFT_STATUSES = ['pending_payment', 'paid', 'delivered', 'canceled'] as const;
/** A gift status (see {@link GIFT_STATUSES}). */
export type GiftStatus = (typeof GIFT_STATUSES)[number];

/** Longest personal message a buyer may add (characters). */
export const MAX_GIFT_MESSAGE_LENGTH = 500;
/** How far ahead a delivery date may be (days). */
export const MAX_GIFT_DELAY_DAYS = 366;

/** A calendar date `YYYY-MM-DD`. */
const CalendarDate = z.iso.date();

/**
 * A gift as reads return it. The access code itself is never part of it (only its id): it reaches the recipient by
 * e-mail, or the buyer's receipt page when no e-mail could be sent.
 */
export const Gift = z
  .object({
    id: Uuid,
    project_id: Uuid,
    plan_id: Uuid.check(z.describe('The plan given: the access code grants one term of it.')),
    buyer_email: Email,
    recipient_email: Email,
    message: z.nullable(z.string()).check(z.describe('The buyer\u2019s personal message to the recipient, or null.')),
    deliver_at: Timestamp.check(
      z.describe('When the recipient gets the code (start of the chosen day in the project\u2019s time zone).'),
    ),
    amount: z.number().check(z.int(), z.nonnegative(), z.describe('Price paid, in the currency\u2019s minor unit.')),
    currency: z.string().check(z.describe('ISO 4217, upper case.')),
    status: z.enum(GIFT_STATUSES),
    provider_checkout_session_id: z
      .nullable(z.string())
      .check(z.describe('The Stripe Checkout Session the buyer pays through (`cs_...`).')),
    access_code_id: z.nullable(Uuid).check(z.describe('The one-use access code delivered (never the code itself).')),
    created_at: Timestamp,
    paid_at: z.nullable(Timestamp),
    delivered_at: z.nullable(Timestamp),
    updated_at: Timestamp,
  })
  .register(z.globalRegistry, { id: 'Gift' });
/** A gift (see {@link Gift}). */
export type Gift = z.infer<typeof Gift>;

/** A page of gifts. */
export const GiftList = listOf(Gift, 'GiftList');

/** `GET /v1/gifts/{id}`. */
export const GiftIdParams = z.strictObject({ id: Uuid.check(z.describe('The gift id.')) });

/** `GET /v1/projects/{project_id}/gifts`. */
export const GiftProjectParams = z.strictObject({ project_id: Uuid.check(z.describe('The project id.')) });

/** The list query of gifts: a page, optionally of one status. */
export const ListGiftsQuery = z.extend(ListQuery, {
  status: z.optional(z.enum(GIFT_STATUSES)).check(z.describe('Only gifts with this status.')),
});

/** `POST /v1/plans/{id}/gift-checkout-sessions`: who gives, to whom, when. */
export const CreateGiftCheckoutRequest = z.strictObject({
  buyer_email: Email.check(z.describe('Who pays (the receipt goes there).')),
  recipient_email: Email.check(z.describe('Who gets the access code.')),
  deliver_on: z.optional(
    CalendarDate.check(
      z.describe(
        `The day the recipient gets the code, in the project\u2019s time zone: today (default) up to ${MAX_GIFT_DELAY_DAYS} days ahead.`,
      ),
    ),
  ),
  message: z.optional(z.string().check(z.maxLength(MAX_GIFT_MESSAGE_LENGTH), z.describe('A personal message.'))),
  success_url: z.optional(
    RedirectUrl.check(z.describe('Where the buyer lands after paying; default the gift\u2019s receipt page.')),
  ),
  cancel_url: z.optional(
    RedirectUrl.check(z.describe('Where the buyer lands after giving up; default the join page.')),
  ),
});
/** The body of a gift checkout (see {@link CreateGiftCheckoutRequest}). */
export type CreateGiftCheckoutRequest = z.infer<typeof CreateGiftCheckoutRequest>;

/** A gift waiting for payment and the hosted checkout to pay it at. */
export const GiftCheckoutSession = z
  .object({
    gift: Gift,
    url: z.string().check(z.describe('The hosted checkout page to send the buyer to.')),
    expires_at: Timestamp.check(z.describe('When the checkout page stops accepting payment.')),
  })
  .register(z.globalRegistry, { id: 'GiftCheckoutSession' });
/** A gift checkout (see {@link GiftCheckoutSession}). */
export type GiftCheckoutSession = z.infer<typeof GiftCheckoutSession>;
