/**
 * The pure parts of a member's durable platform retries (DESIGN D22): the exponential
 * backoff, the recorded error's next attempt, and what a retry reconciles to — the access the member
 * should have now, not the call that failed.
 */
import { describe, expect, it } from 'vitest';
import {
  PLATFORM_SYNC_MAX_ATTEMPTS,
  platformErrorOf,
  platformRetryDelayMs,
} from '../../shared/domain/members/platform-retry.js';
import type { MemberPlatformError, MemberStatus, PlatformAction } from '../../shared/domain/members/schema.js';
import { reconciledAction } from '../../shared/domain/subscriptions/platform-sync.js';
import { MINUTE_MS } from '../../shared/clock.js';

describe('backoff', () => {
  it('waits one minute, doubling up to six hours', () => {
    expect(Array.from({ length: 12 }, (_, index) => platformRetryDelayMs(index + 1) / MINUTE_MS)).toEqual([
      1, 2, 4, 8, 16, 32, 64, 128, 256, 360, 360, 360,
    ]);
  });

  it('records the next attempt until the last one, then none', () => {
    const at = Date.UTC(2026, 0, 1);
    expect(platformErrorOf('ban', 'refused', at, 3)).toEqual({
      action: 'ban',
      message: 'refused',
      at: '2026-01-01T00:00:00.000Z',
      attempts: 3,
      next_attempt_at: '2026-01-01T00:04:00.000Z',
    });
    expect(platformErrorOf('ban', 'refused', at, PLATFORM_SYNC_MAX_ATTEMPTS).next_attempt_at).toBeNull();
  });
});

describe('what a retry reconciles to', () => {
  const error = (action: PlatformAction): MemberPlatformError => ({
    action,
    message: 'x',
    at: '2026-01-01T00:00:00.000Z',
    attempts: 1,
    next_attempt_at: null,
  });
  const member = (status: MemberStatus, failed: PlatformAction) => ({ status, platform_error: error(failed) });
  const active = [{ status: 'canceled' as const }, { status: 'active' as const }];
  const ended = [{ status: 'canceled' as const }];

  it('keeps a banned member or subscriber banned, whatever failed', () => {
    expect(reconciledAction(member('banned', 'grant_access'), { status: 'banned' }, active)).toBe('ban');
    expect(reconciledAction(member('left', 'revoke_access'), { status: 'banned' }, ended)).toBe('ban');
    expect(reconciledAction(member('banned', 'ban'), null, [])).toBe('ban');
  });

  it('grants or removes by the subscriptions as they are now, not by the call that failed', () => {
    expect(reconciledAction(member('joined', 'revoke_access'), { status: 'active' }, active)).toBe('grant_access');
    expect(reconciledAction(member('joined', 'grant_access'), { status: 'active' }, ended)).toBe('revoke_access');
    // A failed unban: access again when a subscription grants it, else out of the chat (and unbanned).
    expect(reconciledAction(member('left', 'unban'), { status: 'active' }, active)).toBe('grant_access');
    expect(reconciledAction(member('left', 'unban'), { status: 'active' }, [{ status: 'suspended' as const }])).toBe(
      'revoke_access',
    );
  });

  it('repeats a failed kick while the member is still kicked, and asks nothing for a member without a subscriber', () => {
    expect(reconciledAction(member('kicked', 'kick'), { status: 'active' }, active)).toBe('kick');
    expect(reconciledAction(member('joined', 'kick'), { status: 'active' }, active)).toBe('grant_access');
    expect(reconciledAction(member('joined', 'revoke_access'), null, [])).toBeNull();
  });
});
