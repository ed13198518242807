/**
 * The dashboard's areas (DESIGN D21, D23): on AWS each is a Lambda of its own, so a function carries only its pages'
 * operations and libraries (the passkey library only in sign-in's, the payment and chat clients only where pages call
 * them). `paths` are under `/dashboard`; each is routed as itself and with `/{proxy+}`, and API Gateway picks the most
 * specific route, so `''` (the main area) takes every path the others do not. The local server serves them as one app.
 */
export const DASHBOARD_AREAS = [
  {
    functionFile: 'dashboard',
    paths: [''],
    description: 'home, team, OAuth consent, tokens, roles, groups, billing, activity, webhooks and static files',
  },
  {
    functionFile: 'dashboard-projects',
    paths: ['/projects'],
    description: 'projects and their plans, subscribers, subscriptions, access codes, messages and audits',
  },
  {
    functionFile: 'dashboard-sign-in',
    paths: ['/sign-in', '/invitations', '/passkeys', '/sign-out', '/account'],
    description: "passkey sign-in and registration, sign-in links, invitations and the member's own account",
  },
] as const;

/** One of {@link DASHBOARD_AREAS}. */
export type DashboardArea = (typeof DASHBOARD_AREAS)[number];
