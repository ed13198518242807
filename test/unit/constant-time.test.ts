import { describe, expect, it } from 'vitest';
import { equalInConstantTime } from '../../shared/constant-time.js';

describe('equalInConstantTime', () => {
  it('is true only for the same non-empty text', () => {
    expect(equalInConstantTime('a1b2c3', 'a1b2c3')).toBe(true);
    expect(equalInConstantTime('a1b2c3', 'a1b2c4')).toBe(false);
    expect(equalInConstantTime('a1b2c3', 'a1b2c')).toBe(false);
    expect(equalInConstantTime('é', 'e\u0301')).toBe(false);
  });

  it('is false when either side is missing or empty, even when both are', () => {
    expect(equalInConstantTime('', '')).toBe(false);
    expect(equalInConstantTime(undefined, undefined)).toBe(false);
    expect(equalInConstantTime(null, 'token')).toBe(false);
    expect(equalInConstantTime('token', undefined)).toBe(false);
  });
});
