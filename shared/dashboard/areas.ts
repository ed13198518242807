/**
 * The dashboard's areas (DESIGN D21, D23): on AWS each is a Lambda of its own, so a function carries only its pages'
 * operations and libraries (the passkey library only in sign-in's, the payment and chat clients only where pages call
 * them). `paths` are under `/dashboard`; each is routed as itself and with `/{proxy+}`, and API Gateway picks the most
 * specific route, so `''` (the main area) takes every path the others do not. The local server serves them as one app.
 */
export const DASHBOARD_AREAS = [
  /** Home, team, OAuth consent, tokens, roles, groups, billing, activity, webhooks, and the static files. */
  { functionFile: 'dashboard', paths: [''] },
  /** Projects and everything inside one: plans, subscribers, subscriptions, access codes, messages, audits. */
  { functionFile: 'dashboard-projects', paths: ['/projects'] },
  /** Signing in and out, invitations, passkey registration, the member's own account. */
  { functionFile: 'dashboard-sign-in', paths: ['/sign-in', '/invitations', '/passkeys', '/sign-out', '/account'] },
] as const;

/** One of {@link DASHBOARD_AREAS}. */
export type DashboardArea = (typeof DASHBOARD_AREAS)[number];
