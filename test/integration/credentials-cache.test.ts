/**
 * Stored credentials opened once per process and seal (DESIGN D16, D22): the item is read every time (strongly
 * consistent), so a credential sealed again or deleted is seen at once, but the data-key unwrap (a KMS `Decrypt` on
 * AWS) is made only for a seal this process has not opened; an inbound hook's constant-work open never uses the cache.
 * Against DynamoDB Local with a local key-encryption key.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { localKeyEncryptionKey } from '../../shared/credentials/local-key.js';
import {
  openCredential,
  openCredentialInConstantWork,
  sealCredential,
  type CredentialRef,
} from '../../shared/credentials/repository.js';
import type { KeyEncryptionKey } from '../../shared/credentials/envelope.js';
import { createTestRuntime, testClock, type TestRuntime } from '../support/store.js';

let runtime: TestRuntime;
let kek: KeyEncryptionKey;
let ref: CredentialRef;

beforeEach(async () => {
  runtime = await createTestRuntime({ clock: testClock() });
  kek = localKeyEncryptionKey(randomBytes(32));
  ref = { teamId: randomUUID(), projectId: randomUUID(), kind: 'stripe' };
});

/** Seals `secrets` for `ref` and stores the item (replacing the one before); returns its key. */
async function store(secrets: Record<string, string>): Promise<{ pk: string; sk: string }> {
  const item = await sealCredential(kek, ref, secrets, {}, new Date(0).toISOString());
  await runtime.store.put({ Item: item });
  return { pk: String(item.pk), sk: String(item.sk) };
}

describe('opening a stored credential', () => {
  it('unwraps its data key once per seal, sees a new seal and a deletion at once, and shares frozen secrets', async () => {
    await store({ secret_key: 'rk_test_first' });
    const unwrap = vi.spyOn(kek, 'unwrapDataKey');
    const first = await openCredential(runtime.store, kek, ref.projectId, 'stripe', ref.teamId);
    const second = await openCredential(runtime.store, kek, ref.projectId, 'stripe', ref.teamId);
    expect(first?.secrets).toEqual({ secret_key: 'rk_test_first' });
    expect(second?.secrets).toEqual({ secret_key: 'rk_test_first' });
    expect(unwrap).toHaveBeenCalledTimes(1);
    expect(() => Object.assign(second!.secrets, { secret_key: 'changed' })).toThrow(TypeError);

    const key = await store({ secret_key: 'rk_test_rotated' });
    const rotated = await openCredential(runtime.store, kek, ref.projectId, 'stripe', ref.teamId);
    expect(rotated?.secrets).toEqual({ secret_key: 'rk_test_rotated' });
    expect(unwrap).toHaveBeenCalledTimes(2);

    // Another team's view of the item, and no item at all, are null whatever was opened before.
    expect(await openCredential(runtime.store, kek, ref.projectId, 'stripe', randomUUID())).toBeNull();
    await runtime.store.delete({ Key: key });
    expect(await openCredential(runtime.store, kek, ref.projectId, 'stripe', ref.teamId)).toBeNull();
  });

  it('opens a seal again under another key-encryption key (which cannot open it), never from the cache', async () => {
    await store({ secret_key: 'rk_test_first' });
    await openCredential(runtime.store, kek, ref.projectId, 'stripe', ref.teamId);
    const other = localKeyEncryptionKey(randomBytes(32));
    await expect(openCredential(runtime.store, other, ref.projectId, 'stripe', ref.teamId)).rejects.toThrow();
  });

  it('unwraps on every constant-work open of an inbound hook, cached seal or not (D22)', async () => {
    await store({ secret_key: 'rk_test_first', webhook_secret: 'whsec_test' });
    await openCredential(runtime.store, kek, ref.projectId, 'stripe', ref.teamId);
    const unwrap = vi.spyOn(kek, 'unwrapDataKey');
    for (let call = 0; call < 3; call++)
      expect((await openCredentialInConstantWork(runtime.store, kek, ref.projectId, 'stripe'))?.secrets).toEqual({
        secret_key: 'rk_test_first',
        webhook_secret: 'whsec_test',
      });
    expect(unwrap).toHaveBeenCalledTimes(3);
  });
});
