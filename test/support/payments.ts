/**
 * Payment fixtures for the pure-decision unit tests: one pending manual renewal of 9.00 EUR (minor units), fields
 * overridable.
 */
import type { Payment } from '../../shared/domain/payments/schema.js';

/**
 * A pending manual renewal payment (900 minor units, EUR) created and updated at `at` (ISO 8601), with `fields` applied
 * over it.
 */
export function samplePayment(at: string, fields: Partial<Payment> = {}): Payment {
  return {
    id: '00000000-0000-4000-8000-0000000000a1',
    project_id: '00000000-0000-4000-8000-000000000001',
    subscriber_id: '00000000-0000-4000-8000-000000000002',
    subscription_id: '00000000-0000-4000-8000-000000000003',
    amount: 900,
    amount_refunded: 0,
    currency: 'EUR',
    status: 'pending',
    provider: 'manual',
    provider_payment_id: null,
    billing_reason: 'renewal',
    mismatch: null,
    discount: null,
    created_at: at,
    updated_at: at,
    ...fields,
  };
}
