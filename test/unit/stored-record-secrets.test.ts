import { describe, expect, it } from 'vitest';
import { parseStoredWebhookEndpoint } from '../../shared/domain/webhook-endpoints/record.js';
import { parseStoredTeamInvitation } from '../../shared/domain/team-members/records.js';
import { parseStoredWebauthnChallenge } from '../../shared/domain/team-members/sign-in-records.js';
import { StoredRecordError } from '../../shared/store/records.js';

const CIPHERTEXT = 'c2VjcmV0LWNpcGhlcnRleHQtdGhhdC1tdXN0LW5vdC1sZWFr';
const HASH = 'ab'.repeat(32);

const endpointItem = {
  pk: 'TEAM#t1',
  sk: 'WEBHOOK_ENDPOINT#e1',
  id: '0b7f3a2e-6a53-4f6e-9d2e-2f0c1f6f2b11',
  team_id: 't1',
  name: 'orders',
  url: 'https://example.test/hook',
  events: ['team.member_joined'],
  is_active: true,
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  sealed_secrets: { v: 1, kek: 'local', wrapped_key: 'd3JhcHBlZA', iv: 'aXY', ciphertext: CIPHERTEXT, tag: 'dGFn' },
  previous_secret_expires_at_ms: null,
  owner_token_id: 'tok_1',
  owner_abilities: [],
  in_flight: {},
  revision: 1,
};

describe('stored records parsed on read (DESIGN D14): errors name the item, never its values', () => {
  it('parses a webhook endpoint item, the keys stripped and the optional public fields left absent', () => {
    const endpoint = parseStoredWebhookEndpoint(endpointItem);
    expect(endpoint).not.toHaveProperty('pk');
    expect(endpoint.max_concurrency).toBeUndefined();
    expect(endpoint.sealed_secrets.ciphertext).toBe(CIPHERTEXT);
  });

  it('leaves out an owner ability the catalogue no longer has, so the endpoint still delivers', () => {
    const endpoint = parseStoredWebhookEndpoint({
      ...endpointItem,
      owner_abilities: ['project:view', 'project:retired-ability'],
    });
    expect(endpoint.owner_abilities).toEqual(['project:view']);
  });

  it('refuses an endpoint with a malformed slot map or revision, naming the entity, key and paths but not the sealed secret', () => {
    const error = (() => {
      try {
        parseStoredWebhookEndpoint({ ...endpointItem, in_flight: { dlv_1: 'soon' }, revision: '2' });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(StoredRecordError);
    const message = (error as StoredRecordError).message;
    expect(message).toContain('webhook_endpoint');
    expect(message).toContain('TEAM#t1 / WEBHOOK_ENDPOINT#e1');
    expect(message).toMatch(/in_flight\.dlv_1/);
    expect(message).toMatch(/revision/);
    expect(message).not.toContain(CIPHERTEXT);
    expect(message).not.toContain('soon');
  });

  it('refuses an invitation whose expiry is not a number without showing its secret hash', () => {
    const item = {
      pk: 'INVITATION#i1',
      sk: 'INVITATION',
      id: 'i1',
      team_id: 't1',
      member_id: '0b7f3a2e-6a53-4f6e-9d2e-2f0c1f6f2b11',
      secret_sha256: HASH,
      expires_at_ms: 'later',
    };
    expect(() => parseStoredTeamInvitation(item)).toThrow(StoredRecordError);
    expect(() => parseStoredTeamInvitation(item)).not.toThrow(HASH);
  });

  it('refuses a WebAuthn challenge of an unknown purpose without showing the challenge', () => {
    const item = {
      pk: 'WEBAUTHN_CHALLENGE#c1',
      sk: 'WEBAUTHN_CHALLENGE',
      challenge: 'challenge-bytes-xyz',
      purpose: 'other',
      expires_at_ms: 1,
    };
    expect(() => parseStoredWebauthnChallenge(item)).toThrow(/purpose/);
    expect(() => parseStoredWebauthnChallenge(item)).not.toThrow('challenge-bytes-xyz');
  });
});
