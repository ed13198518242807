import * as z from '../../schemas/zod.js';
import { entity } from '../../store/keys.js';
import { recordParser } from '../../store/records.js';
import { Payment } from './schema.js';

/**
 * A payment item as stored (`keys.payment`, DESIGN D14, D16): the public fields, `amount_refunded` and
 * `provider_payment_id` and `mismatch` tolerated absent (read as 0, null and null). `revision` and `provider_refund_id`
 * are read by the writes, not here.
 */
const StoredPayment = z.partial(Payment, {
  amount_refunded: true,
  provider_payment_id: true,
  mismatch: true,
  discount: true,
});

/** Parses a payment item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredPayment = recordParser(entity.payment, StoredPayment);

/** A payment's index item in its subscriber's partition (`keys.subscriberPayment`): the payment's id. */
const StoredSubscriberPayment = z.object({ payment_id: Payment.shape.id });

/** Parses a payment's index item in its subscriber's partition. */
export const parseStoredSubscriberPayment = recordParser(entity.subscriberPayment, StoredSubscriberPayment);

/**
 * A provider payment's lookup item (`keys.providerPayment`, DESIGN D16): our payment and the subscription it pays for.
 */
const StoredProviderPayment = z.object({
  payment_id: Payment.shape.id,
  subscription_id: Payment.shape.subscription_id,
});

/** Parses a provider payment's lookup item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProviderPayment = recordParser(entity.providerPayment, StoredProviderPayment);

/** A provider customer's link item (`keys.providerCustomer`, DESIGN D16): the subscriber the customer is. */
const StoredProviderCustomer = z.object({ subscriber_id: Payment.shape.subscriber_id });

/** Parses a provider customer's link item (throws StoredRecordError naming its key when it does not match). */
export const parseStoredProviderCustomer = recordParser(entity.providerCustomer, StoredProviderCustomer);
