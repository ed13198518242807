import { cookieDeletion, cookieSetting, type WebCookie } from '../web/cookies.js';
import { csrfTokenMatches, presentedCsrfToken } from '../web/csrf.js';
import type { WebRequest } from '../web/request.js';
import type { Viewer } from './components.js';
import type { DashboardSession } from '../domain/team-members/sessions.js';

export { formText, formValues } from '../web/request.js';
export { assetResult, htmlResult, jsonResult, redirectResult } from '../web/results.js';
export { doubleSubmitToken } from '../web/csrf.js';

/**
 * The dashboard's HTTP names (DESIGN D21) on the web layer (`shared/web/`): its path, its cookies (session and
 * pre-session CSRF, both `HttpOnly; Secure; SameSite=Strict`, `Path=/dashboard`), the session's CSRF check and
 * the return path after sign-in. Results and form helpers are the web layer's, re-exported for the pages.
 */

/** The path every dashboard page lives under; the session cookie is scoped to it (DESIGN D21). */
export const DASHBOARD_PATH = '/dashboard';
/** The dashboard page of one subscriber, where their subscriptions are listed with their actions. */
export const subscriberPath = (projectId: string, subscriberId: string) =>
  `${DASHBOARD_PATH}/projects/${projectId}/subscribers/${subscriberId}`;
/** The session cookie (DESIGN D21). */
const SESSION: WebCookie = { name: 'dashboard_session', path: DASHBOARD_PATH, sameSite: 'Strict' };
/** The session cookie's name. */
export const SESSION_COOKIE = SESSION.name;
/** The double-submit cookie of the dashboard's forms before a session exists (sign-in link, invitation). */
export const PRESESSION_CSRF_COOKIE: WebCookie = {
  name: 'dashboard_presession',
  path: DASHBOARD_PATH,
  sameSite: 'Strict',
};

/** One dashboard request (the web layer's decoded request). */
export type DashboardRequest = WebRequest;

/** A request with a live session: the viewer (member, team, principal) and the session. */
export interface SignedInRequest extends DashboardRequest {
  viewer: Viewer;
  session: DashboardSession;
}

/** True when the request carries the session's CSRF token (`X-CSRF-Token` header or `csrf_token` field). */
export function hasValidCsrfToken(request: DashboardRequest, session: DashboardSession): boolean {
  return csrfTokenMatches(presentedCsrfToken(request), session.csrf_token);
}

/** `Set-Cookie` of the session cookie. */
export function sessionCookie(value: string): string {
  return cookieSetting(SESSION, value);
}

/** `Set-Cookie` that deletes the session cookie. */
export function clearedSessionCookie(): string {
  return cookieDeletion(SESSION);
}

/**
 * `value` when it is a same-origin dashboard path to return to after sign-in (`/dashboard...`, no scheme,
 * no `//`, no backslash, printable ASCII only, at most 2,000 characters), else null: a `return_to` never
 * leads off the dashboard (no open redirect).
 */
export function safeReturnPath(value: string | null | undefined): string | null {
  if (!value || value.length > 2000) return null;
  if (!/^\/dashboard(?:[/?]|$)/.test(value) || value.includes('//') || value.includes('\\') || /[^ -~]/.test(value))
    return null;
  if (/^\/dashboard\/sign-in(?:[/?]|$)/.test(value)) return null;
  return value;
}
