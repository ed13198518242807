/**
 * The supported payment providers (how subscribers pay creators).
 *
 * Source: interface "Tool-server resources" (`service://enums/payment-provider`).
 * Payloads and resources never carry payment credentials or fee breakdowns (interface "Data exposure").
 */

/** The kind of payment a provider handles. */
export type PaymentProviderCategory = 'card' | 'wallet' | 'crypto' | 'bank' | 'manual';

/**
 * Every payment provider: `{ value, label, category, connectable, description }`. `connectable` says
 * whether a project can connect the provider now (DESIGN D16: connecting one that is not is
 * VALIDATION_FAILED naming the connectable ones): `stripe` (a restricted key and a webhook signing secret,
 * checked and stored encrypted; `shared/providers/stripe.ts`) and `manual`, whose adapter needs no
 * credentials and syncs plans at once (D22).
 */
export const PAYMENT_PROVIDERS = [
  {
    value: 'stripe',
    label: 'Stripe',
    category: 'card',
    connectable: true,
    description: 'Cards and local payment methods through Stripe Checkout and Billing.',
  },
  {
    value: 'paypal',
    label: 'PayPal',
    category: 'wallet',
    connectable: false,
    description: 'PayPal balance and linked cards through PayPal subscriptions.',
  },
  {
    value: 'paddle',
    label: 'Paddle',
    category: 'card',
    connectable: false,
    description: 'Cards and wallets with Paddle as merchant of record.',
  },
  {
    value: 'lemon_squeezy',
    label: 'Lemon Squeezy',
    category: 'card',
    connectable: false,
    description: 'Cards and wallets with Lemon Squeezy as merchant of record.',
  },
  {
    value: 'telegram_stars',
    label: 'Telegram Stars',
    category: 'wallet',
    connectable: false,
    description: 'In-app Telegram Stars for Telegram projects.',
  },
  {
    value: 'coinbase_commerce',
    label: 'Coinbase Commerce',
    category: 'crypto',
    connectable: false,
    description: 'Crypto-currency payments through Coinbase Commerce.',
  },
  {
    value: 'bank_transfer',
    label: 'Bank transfer',
    category: 'bank',
    connectable: false,
    description: 'Bank transfers (SEPA, ACH) confirmed when the funds arrive.',
  },
  {
    value: 'manual',
    label: 'Manual',
    category: 'manual',
    connectable: true,
    description: 'Payments recorded by the creator outside the service (cash, invoice, gift).',
  },
] as const satisfies readonly {
  value: string;
  label: string;
  category: PaymentProviderCategory;
  connectable: boolean;
  description: string;
}[];

/** One entry of {@link PAYMENT_PROVIDERS}. */
type PaymentProviderDefinition = (typeof PAYMENT_PROVIDERS)[number];

/** Union of every payment provider value, e.g. `'stripe'`. */
export type PaymentProvider = PaymentProviderDefinition['value'];

/** Every payment provider value (a tuple usable with `z.enum`). */
export const PAYMENT_PROVIDER_VALUES = PAYMENT_PROVIDERS.map((provider) => provider.value) as unknown as readonly [
  PaymentProvider,
  ...PaymentProvider[],
];

/** Union of the providers a project can connect now (`connectable: true`). */
export type ConnectablePaymentProvider = Extract<PaymentProviderDefinition, { connectable: true }>['value'];

/** The providers a project can connect now, in catalogue order (DESIGN D16). */
export const CONNECTABLE_PAYMENT_PROVIDERS = PAYMENT_PROVIDERS.filter((provider) => provider.connectable).map(
  (provider) => provider.value,
) as unknown as readonly [ConnectablePaymentProvider, ...ConnectablePaymentProvider[]];

/** True when a project can connect `value` now (DESIGN D16). */
export function isConnectablePaymentProvider(value: string): value is ConnectablePaymentProvider {
  return (CONNECTABLE_PAYMENT_PROVIDERS as readonly string[]).includes(value);
}
