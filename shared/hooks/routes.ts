/**
 * The inbound hook routes (DESIGN §1, D22): public routes outside `/v1`, one per provider or platform,
 * each served by its own Lambda on AWS (`functions/<function>.ts`) and by the hooks dispatcher locally
 * (`shared/hooks/dispatcher.ts`). Metadata only (no runtime code): `lib/` reads it to create the routes.
 * The Stripe hook joins this list with its adapter.
 */

/** One inbound hook route. */
export interface HookRoute {
  /** Who sends it (names its receipts and its function). */
  readonly source: 'telegram';
  readonly method: 'POST';
  /** The route path with `{project_id}` (API Gateway path syntax). */
  readonly path: string;
  /** The handler file under `functions/` (without `.ts`). */
  readonly functionFile: 'telegram-hook';
}

/** The Telegram hook: `POST /hooks/telegram/{project_id}` (registered with `setWebhook` when a bot is connected). */
export const TELEGRAM_HOOK_ROUTE: HookRoute = { source: 'telegram', method: 'POST', path: '/hooks/telegram/{project_id}', functionFile: 'telegram-hook' };

/** Every inbound hook route. */
export const HOOK_ROUTES: readonly HookRoute[] = [TELEGRAM_HOOK_ROUTE];

/** The path of `route` for one project (e.g. `/hooks/telegram/<uuid>`). */
export function hookPath(route: HookRoute, projectId: string): string {
  return route.path.replace('{project_id}', encodeURIComponent(projectId));
}
