/**
 * The shapes of Stripe's secrets (DESIGN D16), apart from the SDK so request schemas can check them without
 * carrying the `stripe` package into every bundle that imports a schema.
 */

/** A Stripe secret or restricted API key: `sk_test_...`, `sk_live_...`, `rk_test_...`, `rk_live_...`. */
export const STRIPE_SECRET_KEY_PATTERN = /^(sk|rk)_(test|live)_[A-Za-z0-9]{8,247}$/;

/** A Stripe webhook signing secret (`whsec_...`, as the dashboard or `stripe listen` shows it). */
export const STRIPE_WEBHOOK_SECRET_PATTERN = /^whsec_[A-Za-z0-9+/=]{8,250}$/;

/**
 * True for a live-mode key (`sk_live_`, `rk_live_`), false for a test-mode one: Stripe's mode is in the key's prefix.
 */
export function isLiveModeKey(secretKey: string): boolean {
  return /^(sk|rk)_live_/.test(secretKey);
}
