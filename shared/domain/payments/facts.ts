import { defineFacts } from '../define-facts.js';

/**
 * Payments' abilities and keys (DESIGN D14, D16): each payment is one item in a partition of its own
 * (`TEAM#<team>#PAYMENT#<uuid>`), read by key; a project's payments are listed through the sparse GSI
 * (`TEAM#<team>#PROJECT#<project>#PAYMENTS`, sort key = creation time then id, so a date range is a key
 * condition). A subscriber's payments are small immutable index items in its per-project partition
 * (`...#PROJECT#<project>#SUBSCRIBER_PAYMENTS#<subscriber>`), written with the payment.
 */
export const paymentsFacts = defineFacts({
  abilities: {
    category: 'payment',
    label: 'Payments',
    entries: [
      {
        value: 'project-payment:view-any',
        description: 'List the payments of a project (no payment credentials, no fee breakdown).',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      {
        value: 'project-payment:view',
        description: 'Read one payment (no payment credentials, no fee breakdown).',
        roles: ['developer', 'analyst', 'support', 'viewer'],
      },
      { value: 'project-payment:refund', description: 'Refund a payment in full or in part.', roles: ['support'] },
    ],
  },
  keys: {
    payment: (teamId: string, paymentId: string) => ({ pk: `TEAM#${teamId}#PAYMENT#${paymentId}`, sk: 'PAYMENT' }),
    /** GSI partition of a project's payments. */
    projectPaymentsIndex: (teamId: string, projectId: string) => `TEAM#${teamId}#PROJECT#${projectId}#PAYMENTS`,
    /** GSI sort key of a payment: its creation time (ISO 8601) then its id (a bare time bounds a date range). */
    projectPaymentsIndexSortKey: (createdAtIso: string, paymentId = '') =>
      paymentId ? `${createdAtIso}#${paymentId}` : createdAtIso,
    /** Partition of a subscriber's payment index items. */
    subscriberPaymentsPartition: (teamId: string, projectId: string, subscriberId: string) =>
      `TEAM#${teamId}#PROJECT#${projectId}#SUBSCRIBER_PAYMENTS#${subscriberId}`,
    /** Sort key of a subscriber's payment index item: creation time then id (a bare time bounds a date range). */
    subscriberPaymentSortKey: (createdAtIso: string, paymentId = '') =>
      paymentId ? `PAYMENT#${createdAtIso}#${paymentId}` : `PAYMENT#${createdAtIso}`,
  },
  sortKeyPrefix: {
    /** The sort key of a payment item (`keys.payment`), for cursor checks of the project list. */
    payment: 'PAYMENT',
    /** A subscriber's payment index items. */
    subscriberPayment: 'PAYMENT#',
  },
  entity: { payment: 'payment', subscriberPayment: 'subscriber_payment' },
});
