import type {
  AuthenticationResponseJSON,
  PublicKeyCredentialCreationOptionsJSON,
  PublicKeyCredentialRequestOptionsJSON,
  RegistrationResponseJSON,
} from '@simplewebauthn/server';
import type { Clock } from '../../clock.js';
import { isoTime } from '../../clock.js';
import { ProblemError } from '../../errors.js';
import { newUlid } from '../../ids.js';
import { passkeyStore, webauthnChallengeStore } from '../../store/passkeys.js';
import type { Store } from '../../store/store.js';
import type { TeamMember } from './schema.js';
import { parseStoredPasskey, parseStoredWebauthnChallenge } from './sign-in-records.js';

/** Where a WebAuthn ceremony runs: the page's origin and its relying party id (the origin's host name). */
export interface RelyingParty {
  /** `http://localhost:3000`, `https://abc.execute-api.eu-west-1.amazonaws.com`. */
  origin: string;
  /** The host name of the origin (an IP address is not a valid RP ID: use `localhost` locally). */
  rpId: string;
}

/**
 * Passkeys of team members (DESIGN D21), with `@simplewebauthn/server`: registration (from a session,
 * after a sign-in link) and sign-in with a discoverable credential (no user name typed). The public key
 * and signature counter are stored per credential; a WebAuthn challenge is an item used once, within
 * {@link CHALLENGE_LIFETIME_MS}. Passkey material is never logged, returned or put in an event.
 */

/** `@simplewebauthn/server`, loaded on first use: the local server and the Lambda start without its crypto stack. */
const webauthn = () => import('@simplewebauthn/server');

/** A WebAuthn challenge can be answered within this long (milliseconds): 5 minutes. */
const CHALLENGE_LIFETIME_MS = 5 * 60 * 1000;
/** Shown by authenticators as the relying party's name. */
const RELYING_PARTY_NAME = 'Membership service';

/** A passkey as the member's list shows it. */
export interface PasskeySummary {
  id: string;
  created_at: string;
  last_used_at: string | null;
}

const refused = () =>
  new ProblemError(
    'AUTHENTICATION_REQUIRED',
    'The passkey could not be verified. Try again, or ask for a sign-in link.',
  );

async function newChallenge(
  store: Store,
  clock: Clock,
  challenge: string,
  binding: { purpose: 'registration' | 'authentication'; sessionId?: string },
): Promise<string> {
  const nowMs = clock.nowMs();
  const id = newUlid(nowMs);
  await webauthnChallengeStore.create(store, {
    id,
    challenge,
    ...binding,
    expiresAtMs: nowMs + CHALLENGE_LIFETIME_MS,
  });
  return id;
}

/** Takes (deletes) a challenge once; null when unknown, used, expired or of another purpose or session. */
async function takeChallenge(
  store: Store,
  clock: Clock,
  challengeId: string,
  binding: { purpose: 'registration' | 'authentication'; sessionId?: string },
): Promise<string | null> {
  if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(challengeId)) return null;
  const item = await webauthnChallengeStore.take(store, challengeId);
  if (!item) return null;
  const stored = parseStoredWebauthnChallenge(item);
  if (stored.purpose !== binding.purpose || stored.expires_at_ms <= clock.nowMs()) return null;
  if (binding.sessionId !== undefined && stored.session_id !== binding.sessionId) return null;
  return stored.challenge;
}

/** A member's stored passkeys (throws StoredRecordError when one does not match its record). */
async function memberPasskeys(store: Store, teamId: string, memberId: string) {
  return (await passkeyStore.listOfMember(store, teamId, memberId)).map(parseStoredPasskey);
}

/** The member's passkeys (never their key material). */
export async function listPasskeys(store: Store, teamId: string, memberId: string): Promise<PasskeySummary[]> {
  return (await memberPasskeys(store, teamId, memberId)).map((passkey) => ({
    id: passkey.id,
    created_at: passkey.created_at,
    last_used_at: passkey.last_used_at ?? null,
  }));
}

/**
 * Registration options for the member of session `sessionId` (excluding their existing passkeys) and the
 * id of the challenge to answer, bound to that session.
 */
export async function startPasskeyRegistration(
  store: Store,
  clock: Clock,
  relyingParty: RelyingParty,
  input: { teamId: string; member: Pick<TeamMember, 'id' | 'email' | 'name'>; sessionId: string },
): Promise<{ challengeId: string; options: PublicKeyCredentialCreationOptionsJSON }> {
  const existing = await memberPasskeys(store, input.teamId, input.member.id);
  const options = await (
    await webauthn()
  ).generateRegistrationOptions({
    rpName: RELYING_PARTY_NAME,
    rpID: relyingParty.rpId,
    userName: input.member.email,
    userDisplayName: input.member.name,
    userID: new TextEncoder().encode(input.member.id),
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({ id: passkey.id, transports: passkey.transports })),
    authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
  });
  const challengeId = await newChallenge(store, clock, options.challenge, {
    purpose: 'registration',
    sessionId: input.sessionId,
  });
  return { challengeId, options };
}

/**
 * Verifies a registration response against its challenge (once) and stores the passkey for the member.
 * Errors: AUTHENTICATION_REQUIRED (challenge unknown, used or expired; response not verified),
 * CONFLICT (the credential is registered already).
 */
export async function finishPasskeyRegistration(
  store: Store,
  clock: Clock,
  relyingParty: RelyingParty,
  input: {
    teamId: string;
    memberId: string;
    sessionId: string;
    challengeId: string;
    response: RegistrationResponseJSON;
  },
): Promise<PasskeySummary> {
  const challenge = await takeChallenge(store, clock, input.challengeId, {
    purpose: 'registration',
    sessionId: input.sessionId,
  });
  if (!challenge) throw refused();
  const verification = await (
    await webauthn()
  )
    .verifyRegistrationResponse({
      response: input.response,
      expectedChallenge: challenge,
      expectedOrigin: relyingParty.origin,
      expectedRPID: relyingParty.rpId,
      requireUserVerification: false,
    })
    .catch(() => null);
  if (!verification?.verified) throw refused();
  const { credential } = verification.registrationInfo;
  const now = isoTime(clock.nowMs());
  const created = await passkeyStore.create(store, {
    id: credential.id,
    teamId: input.teamId,
    memberId: input.memberId,
    publicKey: Buffer.from(credential.publicKey).toString('base64url'),
    counter: credential.counter,
    transports: credential.transports,
    createdAt: now,
  });
  if (!created) throw new ProblemError('CONFLICT', 'This passkey is registered already.');
  return { id: credential.id, created_at: now, last_used_at: null };
}

/** Sign-in options (a discoverable credential: the browser offers the member's passkeys) and the challenge's id. */
export async function startPasskeySignIn(
  store: Store,
  clock: Clock,
  relyingParty: RelyingParty,
): Promise<{ challengeId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const options = await (
    await webauthn()
  ).generateAuthenticationOptions({ rpID: relyingParty.rpId, userVerification: 'preferred' });
  const challengeId = await newChallenge(store, clock, options.challenge, { purpose: 'authentication' });
  return { challengeId, options };
}

/**
 * Verifies a sign-in response (challenge used once, signature with the stored public key, counter) and
 * returns the team and member the passkey belongs to. Errors: AUTHENTICATION_REQUIRED (one answer for
 * every failure: unknown passkey, bad signature, used or expired challenge).
 */
export async function finishPasskeySignIn(
  store: Store,
  clock: Clock,
  relyingParty: RelyingParty,
  input: { challengeId: string; response: AuthenticationResponseJSON },
): Promise<{ teamId: string; memberId: string }> {
  const challenge = await takeChallenge(store, clock, input.challengeId, { purpose: 'authentication' });
  const credentialId =
    typeof input.response?.id === 'string' && input.response.id.length <= 1024 ? input.response.id : null;
  const item = challenge && credentialId ? await passkeyStore.find(store, credentialId) : undefined;
  if (!challenge || !item) throw refused();
  const passkey = parseStoredPasskey(item);
  const verification = await (
    await webauthn()
  )
    .verifyAuthenticationResponse({
      response: input.response,
      expectedChallenge: challenge,
      expectedOrigin: relyingParty.origin,
      expectedRPID: relyingParty.rpId,
      credential: {
        id: passkey.id,
        publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
        counter: passkey.counter,
        transports: passkey.transports,
      },
      requireUserVerification: false,
    })
    .catch(() => null);
  if (!verification?.verified) throw refused();
  await passkeyStore.recordUse(store, passkey.id, {
    counter: verification.authenticationInfo.newCounter,
    usedAt: isoTime(clock.nowMs()),
  });
  return { teamId: passkey.team_id, memberId: passkey.member_id };
}
