/**
 * What the service says to subscribers (DESIGN D32): every message kind, whether it is essential (a transactional
 * notice the subscriber cannot opt out of and whose e-mail carries no `List-Unsubscribe`), and the channels a message
 * can go through. Served as `service://enums/message-kind`.
 */

/** Every message kind: `{ value, label, essential, description }`, in the order of a membership's life. */
export const MESSAGE_KINDS = [
  {
    value: 'welcome',
    label: 'Welcome',
    essential: false,
    description: 'Access was granted: how to get in (invite links, bot, portal).',
  },
  {
    value: 'trial_ending',
    label: 'Trial ends soon',
    essential: false,
    description: 'The free trial ends in 3 days.',
  },
  {
    value: 'renewal_reminder',
    label: 'Renewal reminder',
    essential: false,
    description: '7 days before an annual renewal, or before a pass or an access code\u2019s term ends.',
  },
  {
    value: 'payment_failed',
    label: 'Payment failed',
    essential: true,
    description: 'A renewal payment failed: a recovery link, on day 0 and day 3 of the grace period.',
  },
  {
    value: 'grace_ending',
    label: 'Access ends tomorrow',
    essential: true,
    description: 'The day before the grace period of an unpaid renewal ends.',
  },
  {
    value: 'access_removed',
    label: 'Access removed',
    essential: true,
    description: 'Access ended (unpaid, canceled or expired).',
  },
  {
    value: 'cancellation_scheduled',
    label: 'Cancellation scheduled',
    essential: false,
    description: 'The subscription will end at the end of the current period.',
  },
  { value: 'paused', label: 'Paused', essential: false, description: 'The subscription was paused.' },
  { value: 'resumed', label: 'Resumed', essential: false, description: 'The subscription was resumed.' },
  {
    value: 'sign_in_link',
    label: 'Sign-in link',
    essential: true,
    description: 'A one-time link to the portal (15 minutes), asked for on the join page or the portal.',
  },
  {
    value: 'join_confirmation',
    label: 'Confirm your address',
    essential: true,
    description:
      'A free join waits for its e-mail address: a one-time link that confirms it and starts the membership.',
  },
  {
    value: 'gift',
    label: 'Gift',
    essential: true,
    description: 'A gift of a plan arrived: the one-use access code the buyer paid for, on the day they chose.',
  },
  {
    value: 'broadcast',
    label: 'Broadcast',
    essential: false,
    description: 'An announcement the creator sent to an audience of subscribers.',
  },
] as const;

/** A message kind (see {@link MESSAGE_KINDS}). */
export type MessageKind = (typeof MESSAGE_KINDS)[number]['value'];

/** Every message kind value, in catalogue order (a tuple usable with `z.enum`). */
export const MESSAGE_KIND_VALUES = MESSAGE_KINDS.map((kind) => kind.value) as unknown as readonly [
  MessageKind,
  ...MessageKind[],
];

/**
 * True when `kind` is essential: sent despite an opt-out, without `List-Unsubscribe` (RFC 8058 applies to the rest).
 */
export function isEssentialMessage(kind: MessageKind): boolean {
  return MESSAGE_KINDS.find((entry) => entry.value === kind)?.essential ?? false;
}

/** The channels a message goes through: e-mail, or a DM from the project's Telegram or Discord bot. */
export const MESSAGE_CHANNELS = ['email', 'telegram', 'discord'] as const;
/** A message channel (see {@link MESSAGE_CHANNELS}). */
export type MessageChannel = (typeof MESSAGE_CHANNELS)[number];
