import { AUTHENTICATED, defineInternalOperation } from '../../operations/definition.js';
import { Timestamp } from '../../schemas/common.js';
import * as z from '../../schemas/zod.js';
import { InviteTeamMemberRequest, TeamMember } from './schema.js';

/**
 * A team member's dashboard sign-in (DESIGN D21, D35): internal operations with no route or tool, run by
 * `invokeOperation` (surface `dashboard`; a sign-in link made by the operator CLI: `operator`). Signing in, registering
 * a passkey and signing out are exempt from the billing lockdown (D20: a member signs in to pay the invoice). The
 * public ones are counted per IP by the dashboard, whose pages before sign-in spend the public pages' bucket (D4).
 */

/** The `User-Agent` of the browser a session starts in (its first 200 characters are kept for the sessions list). */
const UserAgent = z.optional(z.string().check(z.maxLength(8192)));

/** The ULID of a stored WebAuthn challenge, as its options answer gave it. */
const ChallengeId = z.string().check(z.minLength(1), z.maxLength(64));

/** A WebAuthn ceremony's response as the browser's `navigator.credentials` gave it (JSON; verified by the handler). */
const WebauthnResponse = z.record(z.string(), z.unknown());

/** Where the ceremony ran: the page's origin and relying party id, from the request's host (never from the body). */
const RelyingPartyInput = z.strictObject({
  origin: z.string().check(z.maxLength(2048)),
  rp_id: z.string().check(z.maxLength(253)),
});

/** A new dashboard session: its id, what it allows and the session cookie's value (a credential shown only here). */
const StartedSession = z.object({
  session_id: z.string(),
  state: z.enum(['registration', 'active']),
  session_cookie: z.string(),
});

export const teamMembersInternalOperations = {
  signInWithLink: defineInternalOperation({
    id: 'signInWithLink',
    summary:
      'Sign in to the dashboard with a one-time sign-in link (its token is the credential): a session that must register a passkey first.',
    tag: 'Team members',
    ability: null,
    teamWide: false,
    body: z.strictObject({ token: z.string().check(z.maxLength(200)), user_agent: UserAgent }),
    output: StartedSession,
    events: [],
    write: true,
  }),
  signInWithPasskey: defineInternalOperation({
    id: 'signInWithPasskey',
    summary: 'Sign in to the dashboard with a registered passkey (a WebAuthn assertion answering a challenge).',
    tag: 'Team members',
    ability: null,
    teamWide: false,
    body: z.strictObject({
      challenge_id: ChallengeId,
      response: WebauthnResponse,
      relying_party: RelyingPartyInput,
      user_agent: UserAgent,
    }),
    output: StartedSession,
    events: [],
    write: true,
  }),
  registerPasskey: defineInternalOperation({
    id: 'registerPasskey',
    summary:
      'Register a passkey for the signed-in member (a WebAuthn attestation answering the session’s challenge); the session becomes active.',
    tag: 'Team members',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({
      session_id: z.string().check(z.minLength(1), z.maxLength(64)),
      challenge_id: ChallengeId,
      response: WebauthnResponse,
      relying_party: RelyingPartyInput,
    }),
    output: z.object({ registered: z.literal(true), created_at: Timestamp }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  revokeDashboardSession: defineInternalOperation({
    id: 'revokeDashboardSession',
    summary: 'Sign out one of the member’s own dashboard sessions (the current one: sign-out).',
    tag: 'Team members',
    ability: AUTHENTICATED,
    teamWide: false,
    body: z.strictObject({ session_id: z.string().check(z.minLength(1), z.maxLength(64)) }),
    output: z.object({ revoked: z.literal(true) }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  createSignInLink: defineInternalOperation({
    id: 'createSignInLink',
    summary:
      'Make a one-time dashboard sign-in link (15 minutes, single use) for an active team member (the operator CLI).',
    tag: 'Team members',
    ability: 'team-member:invite',
    teamWide: true,
    body: z.strictObject({ email: z.string().check(z.minLength(1), z.maxLength(320)) }),
    output: z.object({ path: z.string(), expires_at: Timestamp, member_id: TeamMember.shape.id }),
    events: [],
    write: true,
    lockdown: 'exempt',
  }),
  addTeamOwner: defineInternalOperation({
    id: 'addTeamOwner',
    summary:
      'Make an address an active member holding the built-in owner role, for a team’s first person, whom nobody can ' +
      'invite (the demo owner of `npm start`); an address already invited or active is returned unchanged.',
    tag: 'Team members',
    ability: 'team-member:invite',
    teamWide: true,
    body: z.pick(InviteTeamMemberRequest, { email: true, name: true }),
    output: TeamMember,
    events: ['team.member_joined'],
    write: true,
    lockdown: 'exempt',
  }),
};
