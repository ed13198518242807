import { describe, expect, it } from 'vitest';
import { effectiveStatus } from '../../shared/domain/access-codes/repository.js';

const nowMs = Date.parse('2026-03-01T00:00:00.000Z');
const item = (fields: Record<string, unknown>) => ({ pk: 'p', sk: 's', ...fields });

describe('effectiveStatus (an access code\u2019s status at a time, DESIGN D18)', () => {
  it('reads an active code past its expiry as expired, before the deadline worker records it', () => {
    expect(effectiveStatus(item({ status: 'active', code_expires_at: '2026-02-28T23:59:59.000Z' }), nowMs)).toBe(
      'expired',
    );
    expect(effectiveStatus(item({ status: 'active', code_expires_at: '2026-03-01T00:00:00.000Z' }), nowMs)).toBe(
      'expired',
    );
  });

  it('keeps an active code without expiry or not yet expired active, and a revoked or exhausted one as stored', () => {
    expect(effectiveStatus(item({ status: 'active' }), nowMs)).toBe('active');
    expect(effectiveStatus(item({ status: 'active', code_expires_at: '2026-03-02T00:00:00.000Z' }), nowMs)).toBe(
      'active',
    );
    expect(effectiveStatus(item({ status: 'revoked', code_expires_at: '2026-02-01T00:00:00.000Z' }), nowMs)).toBe(
      'revoked',
    );
    expect(effectiveStatus(item({ status: 'exhausted' }), nowMs)).toBe('exhausted');
  });
});
