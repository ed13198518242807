/** The TTL attribute (`expires_at`, epoch SECONDS) that lets DynamoDB delete an item once it is of no use. */
import { DAY_MS } from '../clock.js';

/** How long an expired item outlives its expiry before DynamoDB's TTL may delete it: one day, in seconds. */
const HOUSEKEEPING_SECONDS = DAY_MS / 1000;

/** The TTL attribute (epoch seconds) of an item DynamoDB may delete `afterSeconds` after `atMs` (epoch ms). */
export function ttlAttribute(atMs: number, afterSeconds: number): number {
  return Math.floor(atMs / 1000) + afterSeconds;
}

/**
 * The TTL attribute (epoch seconds) of an item that expires at `expiresAtMs` (epoch ms): a day of housekeeping later.
 */
export function housekeepingTtl(expiresAtMs: number): number {
  return ttlAttribute(expiresAtMs, HOUSEKEEPING_SECONDS);
}
