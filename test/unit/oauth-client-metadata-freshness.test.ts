/** How long a Client ID Metadata Document stays cached, from its `Cache-Control` (DESIGN D30 amended). */
import { describe, expect, it } from 'vitest';
import { freshnessMs } from '../../shared/oauth/client-id-metadata.js';
import { DAY_MS } from '../../shared/clock.js';

describe('freshnessMs', () => {
  it('honours max-age within bounds, defaults without one and never caches no-store or no-cache', () => {
    expect(freshnessMs('public, max-age=600')).toBe(600_000);
    expect(freshnessMs('Max-Age=0')).toBe(0);
    expect(freshnessMs('max-age=99999999')).toBe(DAY_MS);
    expect(freshnessMs(null)).toBe(5 * 60 * 1000);
    expect(freshnessMs('public')).toBe(5 * 60 * 1000);
    expect(freshnessMs('max-age=600, no-store')).toBe(0);
    expect(freshnessMs('no-cache')).toBe(0);
    expect(freshnessMs('max-age=abc')).toBe(5 * 60 * 1000);
  });
});
