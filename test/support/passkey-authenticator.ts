/**
 * A software passkey authenticator for tests without a browser (WebAuthn Level 3, ES256, attestation `none`): it
 * answers the registration and sign-in options the dashboard gives with the JSON a browser's `navigator.credentials`
 * returns, signed with its own P-256 key. The CBOR comes from `@simplewebauthn/server`'s helpers (the verifier's own).
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { isoCBOR } from '@simplewebauthn/server/helpers';

const base64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

/** Authenticator data flags: user present, user verified, attested credential data included. */
const FLAGS = { userPresent: 0x01, userVerified: 0x04, attestedCredential: 0x40 } as const;

/** One passkey held by the authenticator: its credential id, key pair and signature counter. */
export interface SoftwarePasskey {
  readonly credentialId: Buffer;
  readonly privateKey: KeyObject;
  readonly publicKeyCose: Uint8Array;
  counter: number;
}

function newPasskey(): SoftwarePasskey {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  // COSE_Key of an EC2 P-256 ES256 key (RFC 9053): kty 2, alg -7, crv 1, x, y.
  const cose = new Map<number, number | Uint8Array>([
    [1, 2],
    [3, -7],
    [-1, 1],
    [-2, Buffer.from(jwk.x!, 'base64url')],
    [-3, Buffer.from(jwk.y!, 'base64url')],
  ]);
  return { credentialId: randomBytes(32), privateKey, publicKeyCose: isoCBOR.encode(cose), counter: 0 };
}

function clientData(type: 'webauthn.create' | 'webauthn.get', challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

function counterBytes(counter: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32BE(counter);
  return bytes;
}

/** The registration answer to `options` (from `registration-options`) for a page at `origin`, and the new passkey. */
export function answerRegistration(
  options: { challenge: string; rp: { id: string } },
  origin: string,
): { passkey: SoftwarePasskey; response: Record<string, unknown> } {
  const passkey = newPasskey();
  const idLength = Buffer.alloc(2);
  idLength.writeUInt16BE(passkey.credentialId.length);
  const authData = Buffer.concat([
    sha256(options.rp.id),
    Buffer.from([FLAGS.userPresent | FLAGS.userVerified | FLAGS.attestedCredential]),
    counterBytes(passkey.counter),
    Buffer.alloc(16), // AAGUID: none
    idLength,
    passkey.credentialId,
    passkey.publicKeyCose,
  ]);
  const attestationObject = isoCBOR.encode(
    new Map<string, unknown>([
      ['fmt', 'none'],
      ['attStmt', new Map()],
      ['authData', new Uint8Array(authData)],
    ]) as never,
  );
  return {
    passkey,
    response: {
      id: base64url(passkey.credentialId),
      rawId: base64url(passkey.credentialId),
      type: 'public-key',
      response: {
        clientDataJSON: base64url(clientData('webauthn.create', options.challenge, origin)),
        attestationObject: base64url(attestationObject),
        transports: ['internal'],
      },
      clientExtensionResults: {},
    },
  };
}

/** The sign-in answer of `passkey` to `options` (from `passkey-options`) for a page at `origin`; counts a use. */
export function answerSignIn(
  passkey: SoftwarePasskey,
  options: { challenge: string; rpId: string },
  origin: string,
): Record<string, unknown> {
  passkey.counter += 1;
  const authData = Buffer.concat([
    sha256(options.rpId),
    Buffer.from([FLAGS.userPresent | FLAGS.userVerified]),
    counterBytes(passkey.counter),
  ]);
  const clientDataJSON = clientData('webauthn.get', options.challenge, origin);
  const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), passkey.privateKey);
  return {
    id: base64url(passkey.credentialId),
    rawId: base64url(passkey.credentialId),
    type: 'public-key',
    response: {
      clientDataJSON: base64url(clientDataJSON),
      authenticatorData: base64url(authData),
      signature: base64url(signature),
    },
    clientExtensionResults: {},
  };
}
