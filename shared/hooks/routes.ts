/**
 * The inbound hook routes (DESIGN §1, D20, D22): public routes outside `/v1`, one per provider or platform,
 * each served by its own Lambda on AWS (`functions/<function>.ts`) and by the hooks dispatcher locally
 * (`shared/hooks/dispatcher.ts`). Metadata only (no runtime code): `lib/` reads it to create the routes.
 */

/** One inbound hook route. */
export interface HookRoute {
  /**
   * Who sends it (names its receipts and its function): a project's Telegram bot or Discord application, a project's
   * Stripe account, the operator's Stripe account.
   */
  readonly source: 'telegram' | 'discord' | 'stripe' | 'billing_stripe';
  readonly method: 'POST';
  /** The route path (API Gateway path syntax), with `{project_id}` for a project's hook. */
  readonly path: string;
  /** The handler file under `functions/` (without `.ts`). */
  readonly functionFile: 'telegram-hook' | 'discord-hook' | 'stripe-hook' | 'billing-stripe-hook';
  /**
   * True when the hook opens a project's stored credential (its Lambda may decrypt with the credentials key, DESIGN
   * D16).
   */
  readonly opensCredentials: boolean;
  /**
   * True when the hook verifies with the operator's billing webhook signing secret (DESIGN D20): on AWS its
   * Lambda alone may read that Secrets Manager secret and is given its ARN (`BILLING_STRIPE_WEBHOOK_SECRET_ARN`).
   */
  readonly readsBillingWebhookSecret: boolean;
}

/** The Telegram hook: `POST /hooks/telegram/{project_id}` (registered with `setWebhook` when a bot is connected). */
export const TELEGRAM_HOOK_ROUTE: HookRoute = {
  source: 'telegram',
  method: 'POST',
  path: '/hooks/telegram/{project_id}',
  functionFile: 'telegram-hook',
  opensCredentials: true,
  readsBillingWebhookSecret: false,
};

/**
 * The Discord interactions hook (DESIGN D28): `POST /hooks/discord/{project_id}`, the application's interactions
 * endpoint URL, signed with Ed25519.
 */
export const DISCORD_HOOK_ROUTE: HookRoute = {
  source: 'discord',
  method: 'POST',
  path: '/hooks/discord/{project_id}',
  functionFile: 'discord-hook',
  opensCredentials: true,
  readsBillingWebhookSecret: false,
};

/**
 * A project's Stripe events: `POST /hooks/stripe/{project_id}` (the creator's Stripe webhook endpoint, signed with the
 * connected `webhook_secret`).
 */
export const STRIPE_HOOK_ROUTE: HookRoute = {
  source: 'stripe',
  method: 'POST',
  path: '/hooks/stripe/{project_id}',
  functionFile: 'stripe-hook',
  opensCredentials: true,
  readsBillingWebhookSecret: false,
};

/**
 * The operator's billing events (DESIGN D20): `POST /hooks/billing/stripe`, signed with the operator's signing secret
 * (`BILLING_STRIPE_WEBHOOK_SECRET`; on AWS a Secrets Manager secret).
 */
export const BILLING_STRIPE_HOOK_ROUTE: HookRoute = {
  source: 'billing_stripe',
  method: 'POST',
  path: '/hooks/billing/stripe',
  functionFile: 'billing-stripe-hook',
  opensCredentials: false,
  readsBillingWebhookSecret: true,
};

/** Every inbound hook route. */
export const HOOK_ROUTES: readonly HookRoute[] = [
  TELEGRAM_HOOK_ROUTE,
  DISCORD_HOOK_ROUTE,
  STRIPE_HOOK_ROUTE,
  BILLING_STRIPE_HOOK_ROUTE,
];

/** The path of `route` for one project (e.g. `/hooks/telegram/<uuid>`); a route without `{project_id}` is its path. */
export function hookPath(route: HookRoute, projectId = ''): string {
  return route.path.replace('{project_id}', encodeURIComponent(projectId));
}
