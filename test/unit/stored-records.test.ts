import { describe, expect, it } from 'vitest';
import { pendingRevocationsOf } from '../../shared/domain/members/platform-retry.js';
import { parseStoredTeam } from '../../shared/domain/teams/record.js';
import { parseStoredToken } from '../../shared/domain/tokens/record.js';
import * as z from '../../shared/schemas/zod.js';
import { StoredRecordError, parseItem, revisionOf } from '../../shared/store/records.js';

const teamId = '0b7f7c0e-6d1b-4f3e-9a51-6a7f0c3b2f11';
const tokenItem = {
  pk: 'TOKEN#01JDZ3W4Q4S1F3V2H8K5M7N9PX',
  sk: 'TOKEN',
  entity: 'token',
  gsi1pk: `TEAM#${teamId}#TOKENS`,
  gsi1sk: '01JDZ3W4Q4S1F3V2H8K5M7N9PX',
  id: '01JDZ3W4Q4S1F3V2H8K5M7N9PX',
  team_id: teamId,
  name: null,
  abilities: ['team:view'],
  scopes: [`scope:team:${teamId}`],
  created_at: '2026-11-27T07:00:00.000Z',
  secret_sha256: 'c0ffee'.repeat(10),
  team_snapshot: { id: teamId, name: 'Team', created_at: '2026-11-27T07:00:00.000Z' },
};

describe('stored records parsed on read', () => {
  it('keeps the fields of the stored record and strips keys, index keys and the secret’s hash', () => {
    expect(parseStoredToken(tokenItem)).toEqual({
      id: tokenItem.id,
      team_id: teamId,
      name: null,
      abilities: ['team:view'],
      scopes: [`scope:team:${teamId}`],
      created_at: '2026-11-27T07:00:00.000Z',
    });
  });

  it('refuses an item that does not match, naming the entity, its key and the failing fields but never a value', () => {
    const broken = { ...tokenItem, abilities: ['no-such:ability'], created_at: 42 };
    let caught: unknown;
    try {
      parseStoredToken(broken);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(StoredRecordError);
    const error = caught as StoredRecordError;
    expect(error).toMatchObject({ entity: 'token', key: `${tokenItem.pk} / TOKEN` });
    expect(error.message).toContain('abilities.0');
    expect(error.message).toContain('created_at');
    for (const value of ['no-such:ability', '42', tokenItem.secret_sha256]) expect(error.message).not.toContain(value);
  });

  it('names a key built from a hash only as the caller describes it', () => {
    const schema = z.object({ subscription_id: z.string() });
    const item = { pk: `WELCOME_LINK#${'ab'.repeat(32)}`, sk: 'WELCOME_LINK', subscription_id: 7 };
    expect(() => parseItem('welcome_link', schema, item, () => 'WELCOME_LINK#(hash withheld)')).toThrow(
      /welcome_link WELCOME_LINK#\(hash withheld\)/,
    );
    expect(() => parseItem('welcome_link', schema, item, () => 'WELCOME_LINK#(hash withheld)')).not.toThrow(/abab/);
  });

  it('parses a team stored before updated_at existed and never deleted (both attributes absent)', () => {
    const team = parseStoredTeam({
      pk: `TEAM#${teamId}`,
      sk: 'TEAM',
      id: teamId,
      name: 'Team',
      created_at: '2026-11-27T07:00:00.000Z',
    });
    expect(team).toEqual({ id: teamId, name: 'Team', created_at: '2026-11-27T07:00:00.000Z' });
  });

  it('reads an item’s revision as a whole number, 0 when stored without one, and refuses any other value', () => {
    const key = { pk: `TEAM#${teamId}`, sk: 'PLAN#p' };
    expect(revisionOf('plan', { ...key, revision: 7 })).toBe(7);
    expect(revisionOf('plan', key)).toBe(0);
    for (const revision of ['7', 1.5, -1])
      expect(() => revisionOf('plan', { ...key, revision })).toThrow(StoredRecordError);
    expect(() => revisionOf('plan', { ...key, revision: '7' })).toThrow(/plan TEAM#.* \/ PLAN#p .*revision/);
  });

  it('reads a member’s pending invite-link revocations, none when absent, and never names a link in a parse error', () => {
    const key = { pk: `TEAM#${teamId}#PROJECT#p`, sk: 'MEMBER#m' };
    const url = 'https://t.me/+secretInviteLink';
    const revocation = { resource: { kind: 'channel', platform_resource_id: '-100123' }, url };
    expect(pendingRevocationsOf({ ...key, invite_link_revocations: [revocation] })).toEqual([revocation]);
    expect(pendingRevocationsOf(key)).toEqual([]);
    const broken = {
      ...key,
      invite_link_revocations: [{ resource: { kind: 'nothing', platform_resource_id: 5 }, url }],
    };
    expect(() => pendingRevocationsOf(broken)).toThrow(StoredRecordError);
    expect(() => pendingRevocationsOf(broken)).not.toThrow(/secretInviteLink|-100123/);
  });
});
