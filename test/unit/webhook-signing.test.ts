/**
 * Webhook signing (server side) and verification (receiver side): interface "Webhook trust",
 * "Limits" (300-second window, 24-hour id retention), DESIGN D8.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import {
  computeSignature,
  computeStandardSignature,
  generateWebhookSecret,
  signatureHeader,
  standardSignatureHeader,
} from '../../shared/domain/webhook-deliveries/signing.js';
import {
  createMemorySeenStore,
  verifyWebhook,
  WebhookVerificationError,
  type VerifyWebhookInput,
  type WebhookVerificationReason,
} from '../../shared/domain/webhook-deliveries/verify.js';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw4c2hsDu2iqs=';
const now = 1_777_600_000;
const event = {
  id: 'evt_01JTESTTESTTESTTESTTESTTES',
  type: 'subscription.created',
  created_at: '2026-05-01T00:00:00.000Z',
  api_version: '2026-05-01',
  project_id: '6f1f0c1e-9d5b-4b1e-8d43-2c1e0a1b2c3d',
  data: { subscription: { id: 's1' }, subscriber: { id: 'u1' }, plan: { id: 'p1' }, access_code: null },
};
const rawBody = JSON.stringify(event);

function signedInput(overrides: Partial<VerifyWebhookInput> & { signature?: string } = {}): VerifyWebhookInput {
  const { signature, ...rest } = overrides;
  return {
    rawBody,
    headers: {
      'svc-signature': signature ?? signatureHeader({ secret, timestampSeconds: now, rawBody }),
      'svc-event-id': event.id,
      'svc-event-name': event.type,
    },
    secret,
    nowSeconds: now,
    ...rest,
  };
}

async function reasonOf(promise: Promise<unknown>): Promise<WebhookVerificationReason> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return (error as WebhookVerificationError).reason;
  }
  throw new Error('expected verification to fail');
}

describe('signing', () => {
  it('computes hex HMAC-SHA256 of "<t>.<body>" keyed with the whole secret string', () => {
    // Known-answer vector computed independently here with node:crypto.
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${now}.${rawBody}`).digest('hex');
    expect(computeSignature(secret, now, rawBody)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
    // A fixed vector guards against accidental key or message changes (e.g. decoding the base64 part).
    expect(computeSignature('whsec_test', 1700000000, '{"a":1}')).toBe(
      createHmac('sha256', 'whsec_test').update('1700000000.{"a":1}').digest('hex'),
    );
  });

  it('formats the header as t=<ts>,v1=<hex> and adds v0 with the previous secret', () => {
    const single = signatureHeader({ secret, timestampSeconds: now, rawBody });
    expect(single).toBe(`t=${now},v1=${computeSignature(secret, now, rawBody)}`);
    expect(single).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    const old = generateWebhookSecret();
    const dual = signatureHeader({ secret, previousSecret: old, timestampSeconds: now, rawBody });
    expect(dual).toBe(
      `t=${now},v1=${computeSignature(secret, now, rawBody)},v0=${computeSignature(old, now, rawBody)}`,
    );
  });

  it('rejects millisecond or fractional timestamps', () => {
    expect(() => computeSignature(secret, 1.5, rawBody)).toThrow(TypeError);
    expect(() => computeSignature(secret, -1, rawBody)).toThrow(TypeError);
  });

  it('generates whsec_ + base64 of 32 random bytes', () => {
    const a = generateWebhookSecret();
    const b = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});

describe('verifyWebhook', () => {
  it('accepts a correctly signed delivery and returns the envelope', async () => {
    await expect(verifyWebhook(signedInput())).resolves.toEqual(event);
  });

  it('accepts a Buffer body and mixed-case header names', async () => {
    const input = signedInput();
    const result = await verifyWebhook({
      ...input,
      rawBody: Buffer.from(rawBody),
      headers: {
        'SVC-Signature': input.headers['svc-signature'],
        'Svc-Event-Id': event.id,
        'SVC-EVENT-NAME': [event.type],
      },
    });
    expect(result.id).toBe(event.id);
  });

  it('accepts v0 alone or alongside a stale v1 (dashboard rotation dual-sign)', async () => {
    const old = 'whsec_old';
    const dual = signatureHeader({ secret: 'whsec_new', previousSecret: old, timestampSeconds: now, rawBody });
    // A receiver still configured with the old secret matches v0.
    await expect(verifyWebhook(signedInput({ signature: dual, secret: old }))).resolves.toMatchObject({ id: event.id });
    // And one already on the new secret matches v1.
    await expect(verifyWebhook(signedInput({ signature: dual, secret: 'whsec_new' }))).resolves.toMatchObject({
      id: event.id,
    });
    const v0Only = `t=${now},v0=${computeSignature(old, now, rawBody)}`;
    await expect(verifyWebhook(signedInput({ signature: v0Only, secret: old }))).resolves.toBeTruthy();
  });

  it('accepts several v1 entries and ignores unknown schemes', async () => {
    const header = `t=${now},v1=${'0'.repeat(64)},v2=zzz,v1=${computeSignature(secret, now, rawBody)}`;
    await expect(verifyWebhook(signedInput({ signature: header }))).resolves.toBeTruthy();
  });

  it('enforces the 300-second window in both directions, even with a valid signature', async () => {
    for (const offset of [-300, 300, 0]) {
      await expect(verifyWebhook(signedInput({ nowSeconds: now + offset }))).resolves.toBeTruthy();
    }
    for (const offset of [-301, 301, 86_400]) {
      expect(await reasonOf(verifyWebhook(signedInput({ nowSeconds: now + offset })))).toBe(
        'timestamp_outside_tolerance',
      );
    }
    // A custom tolerance.
    expect(await reasonOf(verifyWebhook(signedInput({ nowSeconds: now + 61, toleranceSeconds: 60 })))).toBe(
      'timestamp_outside_tolerance',
    );
  });

  it('rejects a tampered body, a wrong secret and a re-signed timestamp', async () => {
    expect(await reasonOf(verifyWebhook(signedInput({ rawBody: rawBody.replace('s1', 's2') })))).toBe(
      'signature_mismatch',
    );
    expect(await reasonOf(verifyWebhook(signedInput({ secret: 'whsec_other' })))).toBe('signature_mismatch');
    const sig = computeSignature(secret, now, rawBody);
    expect(await reasonOf(verifyWebhook(signedInput({ signature: `t=${now + 1},v1=${sig}` })))).toBe(
      'signature_mismatch',
    );
    expect(await reasonOf(verifyWebhook(signedInput({ signature: `t=${now},v1=${sig.slice(0, 63)}` })))).toBe(
      'signature_mismatch',
    );
  });

  it('reports missing and malformed headers', async () => {
    const input = signedInput();
    expect(
      await reasonOf(verifyWebhook({ ...input, headers: { 'svc-event-id': event.id, 'svc-event-name': event.type } })),
    ).toBe('missing_header');
    expect(await reasonOf(verifyWebhook({ ...input, headers: { ...input.headers, 'svc-event-id': undefined } }))).toBe(
      'missing_header',
    );
    for (const bad of ['v1=abc', `t=abc,v1=${'0'.repeat(64)}`, `t=${now}`, 'garbage', `t=${now},t=${now + 1},v1=00`]) {
      expect(await reasonOf(verifyWebhook(signedInput({ signature: bad }))), bad).toBe('malformed_header');
    }
  });

  it('rejects SVC-Event-Id / SVC-Event-Name that differ from the body', async () => {
    const input = signedInput();
    expect(
      await reasonOf(verifyWebhook({ ...input, headers: { ...input.headers, 'svc-event-id': 'evt_other' } })),
    ).toBe('header_mismatch');
    expect(
      await reasonOf(verifyWebhook({ ...input, headers: { ...input.headers, 'svc-event-name': 'payment.failed' } })),
    ).toBe('header_mismatch');
  });

  it('rejects an authentic body that is not an envelope', async () => {
    const body = '[1,2,3]';
    const input: VerifyWebhookInput = {
      rawBody: body,
      headers: {
        'svc-signature': signatureHeader({ secret, timestampSeconds: now, rawBody: body }),
        'svc-event-id': 'x',
        'svc-event-name': 'y',
      },
      secret,
      nowSeconds: now,
    };
    expect(await reasonOf(verifyWebhook(input))).toBe('malformed_body');
  });

  it('de-duplicates event ids through the seen store and keeps them at least 24 hours', async () => {
    let clock = now;
    const seen = createMemorySeenStore(() => clock);
    const ttls: number[] = [];
    const spy = {
      has: (id: string) => seen.has(id),
      add: (id: string, ttl: number) => (ttls.push(ttl), seen.add(id, ttl)),
    };
    await expect(verifyWebhook(signedInput({ seen: spy }))).resolves.toBeTruthy();
    expect(ttls).toEqual([86_400]);
    expect(await reasonOf(verifyWebhook(signedInput({ seen: spy })))).toBe('duplicate_event');
    // Still remembered just before 24 hours, forgotten after.
    clock = now + 86_399;
    expect(seen.has(event.id)).toBe(true);
    clock = now + 86_401;
    expect(seen.has(event.id)).toBe(false);
    expect(seen.size()).toBe(0);
  });

  it('raises a seen ttl below 24 hours to 86 400 seconds', async () => {
    const ttls: number[] = [];
    const store = { has: () => false, add: (_id: string, ttl: number) => void ttls.push(ttl) };
    await verifyWebhook(signedInput({ seen: store, seenTtlSeconds: 10 }));
    await verifyWebhook(signedInput({ seen: store, seenTtlSeconds: 172_800 }));
    expect(ttls).toEqual([86_400, 172_800]);
  });

  it('does not record ids of deliveries that fail verification', async () => {
    const seen = createMemorySeenStore(() => now);
    await reasonOf(verifyWebhook(signedInput({ seen, secret: 'whsec_wrong' })));
    expect(seen.has(event.id)).toBe(false);
    await expect(verifyWebhook(signedInput({ seen }))).resolves.toBeTruthy();
  });

  it('works with an async seen store', async () => {
    const ids = new Set<string>();
    const store = {
      has: async (id: string) => ids.has(id),
      add: async (id: string) => {
        ids.add(id);
      },
    };
    await verifyWebhook(signedInput({ seen: store }));
    expect(await reasonOf(verifyWebhook(signedInput({ seen: store })))).toBe('duplicate_event');
  });
});

describe('Standard Webhooks signatures (DESIGN D29)', () => {
  it('equal the standardwebhooks library’s own signing for the same id, time and body (the key is the base64-decoded secret)', () => {
    for (const key of [secret, generateWebhookSecret()]) {
      const expected = new StandardWebhook(key).sign(event.id, new Date(now * 1000), rawBody);
      expect(`v1,${computeStandardSignature(key, event.id, now, rawBody)}`).toBe(expected);
    }
  });

  it('signs with the previous secret too during a dual-signing window, space-separated', () => {
    const previous = generateWebhookSecret();
    const header = standardSignatureHeader({
      secret,
      previousSecret: previous,
      timestampSeconds: now,
      rawBody,
      id: event.id,
    });
    expect(header.split(' ')).toEqual([
      `v1,${computeStandardSignature(secret, event.id, now, rawBody)}`,
      `v1,${computeStandardSignature(previous, event.id, now, rawBody)}`,
    ]);
    expect(standardSignatureHeader({ secret, timestampSeconds: now, rawBody, id: event.id }).split(' ')).toHaveLength(
      1,
    );
  });

  it('refuses a millisecond timestamp', () => {
    expect(() => computeStandardSignature(secret, event.id, now * 1000 + 0.5, rawBody)).toThrow(TypeError);
  });
});
