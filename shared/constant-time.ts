import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when `given` equals `expected`, both present and non-empty: compared in constant time over their SHA-256
 * digests, so neither the position of a difference nor the lengths leak. For secrets and tokens a caller presents.
 */
export function equalInConstantTime(given: string | null | undefined, expected: string | null | undefined): boolean {
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  const same = timingSafeEqual(digest(given ?? ''), digest(expected ?? ''));
  return same && Boolean(given) && Boolean(expected);
}
