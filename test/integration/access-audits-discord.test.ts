/**
 * Access audits, platform side (DESIGN D34), against the loopback Discord API: the audit pages the server's members
 * (`GET /guilds/{id}/members?limit=&after=`) and matches them to subscribers by linked account. Drift made on purpose
 * at the fake — a paid role added by hand to a member nobody pays for, the role taken from an entitled member, an
 * entitled member removed from the server — is found as `role_without_entitlement`, `role_missing` and `member_left`,
 * and each repair puts the fake back in line with our entitlements.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { processAccessAuditPage } from '../../shared/domain/access-audits/worker.js';
import { completeDiscordLink } from '../../shared/domain/members/discord-link.js';
import {
  GUILD_ID,
  ROLE_ID,
  SESSION,
  USER_ID,
  authorize,
  call,
  discord,
  projectId,
  runtime,
  subscribedWithPlan,
  useDiscordFixture,
} from '../support/fixtures/discord.js';

useDiscordFixture();

const STRANGER = '700000000000000077';

const audits = () => `/v1/projects/${projectId}/access-audits`;

/** Runs an audit to its end; answers the latest audit. */
async function runAudit() {
  expect((await call('POST', audits(), {})).status).toBe(202);
  while (runtime.auditPages.length) await processAccessAuditPage(runtime, runtime.auditPages.shift()!);
  const latest = (await call('GET', `${audits()}/latest`)).json;
  expect(latest.status).toBe('succeeded');
  return latest;
}

/** A subscriber with an active subscription whose Discord account USER_ID is linked and in the server. */
async function linkedMember() {
  const { subscriberId, subscriptionId } = await subscribedWithPlan();
  const { code, state } = await authorize(
    subscriberId,
    { id: USER_ID, username: 'ada' },
    `user-${randomBytes(6).toString('hex')}`,
  );
  await completeDiscordLink(runtime, { projectId, portalSessionId: SESSION, subscriberId, code, state });
  const guild = discord.guild(GUILD_ID);
  expect([...guild.members.get(USER_ID)!]).toEqual([ROLE_ID]);
  return { subscriberId, subscriptionId, guild };
}

describe('access audits: Discord against our entitlements', () => {
  it('finds nothing when the server holds what we grant; counts members linked to nobody', async () => {
    const { guild } = await linkedMember();
    guild.members.set(STRANGER, new Set());
    const latest = await runAudit();
    expect(latest.open_findings).toBe(0);
    expect(latest).toMatchObject({ unlinked_members: 1, audited: { platform_members: 2, subscriptions: 1 } });
    expect(discord.callsOf('GET /guilds/')).toContainEqual(
      expect.objectContaining({ route: `GET /guilds/${GUILD_ID}/members` }),
    );
  });

  it('finds a paid role held by hand, a missing role and a member who left, and repairs each', async () => {
    const { guild, subscriptionId } = await linkedMember();
    guild.members.set(STRANGER, new Set([ROLE_ID]));
    guild.members.get(USER_ID)!.delete(ROLE_ID);
    let latest = await runAudit();
    expect(latest.counts).toMatchObject({ role_without_entitlement: 1, role_missing: 1, member_left: 0 });
    const kinds = new Map(latest.findings.map((finding: { kind: string }) => [finding.kind, finding]));
    expect(kinds.get('role_without_entitlement')).toMatchObject({
      objects: { platform_user_id: STRANGER, platform_role_id: ROLE_ID, subscriber_id: null },
      repair: { action: 'remove_role' },
    });
    expect(kinds.get('role_missing')).toMatchObject({
      objects: { platform_user_id: USER_ID, platform_role_id: ROLE_ID },
      repair: { action: 'grant_role' },
    });
    for (const finding of latest.findings)
      expect((await call('POST', `${audits()}/findings/${finding.id}/repair`)).status).toBe(200);
    expect([...guild.members.get(STRANGER)!]).toEqual([]);
    expect([...guild.members.get(USER_ID)!]).toEqual([ROLE_ID]);

    // The entitled member is removed from the server at Discord: they left.
    guild.members.delete(USER_ID);
    latest = await runAudit();
    expect(latest.counts).toMatchObject({ role_without_entitlement: 0, role_missing: 0, member_left: 1 });
    const [left] = latest.findings;
    expect(left).toMatchObject({
      kind: 'member_left',
      objects: { platform_user_id: USER_ID, subscription_id: subscriptionId },
      repair: { action: 'grant_access' },
    });
    expect((await call('POST', `${audits()}/findings/${left.id}/repair`)).json).toMatchObject({ status: 'repaired' });
    expect([...guild.members.get(USER_ID)!]).toEqual([ROLE_ID]);
    expect((await runAudit()).open_findings).toBe(0);
  });
});
