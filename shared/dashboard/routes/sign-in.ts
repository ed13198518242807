import type { DashboardRequest, SignedInRequest } from '../http.js';
import type { DashboardRoute, Page } from './route.js';

/**
 * Signing in and out (DESIGN D21): public pages, the passkey registration a sign-in link requires, the account page.
 */

const signIn = () => import('../pages/sign-in.js');
const account = () => import('../pages/account.js');
type SignIn = Awaited<ReturnType<typeof signIn>>;

/** The dashboard's forms posted before a session exists: they carry the pre-session double-submit token. */
const PRESESSION_FORMS: ReadonlySet<string> = new Set(['/sign-in/link', '/invitations/accept']);

const open = (method: 'GET' | 'POST', path: string, pick: (m: SignIn) => Page<DashboardRequest>): DashboardRoute => ({
  method,
  path,
  access: 'public',
  presessionForm: PRESESSION_FORMS.has(path) && method === 'POST',
  page: async () => pick(await signIn()),
});
const registering = (
  method: 'GET' | 'POST',
  path: string,
  pick: (m: SignIn) => Page<SignedInRequest>,
): DashboardRoute => ({ method, path, access: 'registration', page: async () => pick(await signIn()) });

/** The sign-in group's routes. */
export const SIGN_IN_ROUTES: DashboardRoute[] = [
  open('GET', '/sign-in', (m) => m.signInPage),
  open('GET', '/sign-in/link', (m) => m.signInLinkPage),
  open('POST', '/sign-in/link', (m) => m.useSignInLink),
  open('POST', '/sign-in/passkey-options', (m) => m.passkeySignInOptions),
  open('POST', '/sign-in/passkey', (m) => m.passkeySignIn),
  open('GET', '/invitations/accept', (m) => m.invitationPage),
  open('POST', '/invitations/accept', (m) => m.acceptInvitation),
  registering('GET', '/passkeys/new', (m) => m.registerPasskeyPage),
  registering('POST', '/passkeys/registration-options', (m) => m.passkeyRegistrationOptions),
  registering('POST', '/passkeys/register', (m) => m.passkeyRegister),
  registering('POST', '/sign-out', (m) => m.signOut),
  { method: 'GET', path: '/account', access: 'signed-in', page: async () => (await account()).accountPage },
  {
    method: 'POST',
    path: '/account/sessions/:id/revoke',
    access: 'signed-in',
    page: async () => (await account()).revokeOwnSession,
  },
];
