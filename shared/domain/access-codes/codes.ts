import { createHash, randomInt } from 'node:crypto';
import { CODE_SUFFIX_LENGTH } from './schema.js';

/**
 * The redeemable code text (DESIGN D18): an unambiguous alphabet (no 0/O, 1/I/L), an optional prefix,
 * three groups of four random characters (31^12 ≈ 7.9 × 10^17 codes, about 59 bits), e.g.
 * `SPRING-7KQ4-M2XD-9HTP`. Codes are case-insensitive and dashes or spaces are ignored when one is
 * presented ({@link normalizeCode}); the table only ever holds a SHA-256 of the normalized code
 * ({@link codeDigest}, the code-lookup key) and the last characters ({@link codeSuffix}).
 */

/** The alphabet of the random part: digits 2–9 and upper-case letters without I, L, O. */
const CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
/** Random characters per code. */
const CODE_RANDOM_LENGTH = 12;
const GROUP = 4;

/** A new code: `<PREFIX>-XXXX-XXXX-XXXX` (prefix upper-cased) or `XXXX-XXXX-XXXX`, from crypto randomness. */
function newCode(prefix: string | null): string {
  let random = '';
  for (let index = 0; index < CODE_RANDOM_LENGTH; index++) random += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  const groups = random.match(new RegExp(`.{1,${GROUP}}`, 'g'))!;
  return [...(prefix ? [prefix.toUpperCase()] : []), ...groups].join('-');
}

/** Where new codes come from: an object, so a test can force collisions with `vi.spyOn(codeSource, 'newCode')`. */
export const codeSource = { newCode };

/** The canonical form two codes are compared in: upper case, without dashes and white space. */
export function normalizeCode(code: string): string {
  return code.toUpperCase().replace(/[-\s]/g, '');
}

/** SHA-256 (hex) of the normalized code: the code-lookup key, unique per project. */
export function codeDigest(code: string): string {
  return createHash('sha256').update(normalizeCode(code), 'utf8').digest('hex');
}

/** The last characters of a code, shown by reads instead of the code. */
export function codeSuffix(code: string): string {
  return normalizeCode(code).slice(-CODE_SUFFIX_LENGTH);
}
