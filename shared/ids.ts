import { randomFillSync, randomUUID } from 'node:crypto';
import * as z from './schemas/zod.js';
import { monotonicFactory } from 'ulid';

/** Random bytes drawn from the system 4 KiB at a time ({@link pooledRandomFraction}). */
const randomPool = Buffer.alloc(4096);
let randomPoolOffset = randomPool.length;

/**
 * A random fraction in [0, 1) from one system-random byte, as ulid's own source gives, but from a pool: ulid's source
 * asks the system for one byte per character (16 calls per ULID, about 80 µs).
 */
function pooledRandomFraction(): number {
  if (randomPoolOffset === randomPool.length) {
    randomFillSync(randomPool);
    randomPoolOffset = 0;
  }
  return randomPool[randomPoolOffset++] / 256;
}

/** One monotonic factory per recent millisecond; the oldest is dropped past {@link RECENT_MILLISECONDS}. */
const factories = new Map<number, ReturnType<typeof monotonicFactory>>();
const RECENT_MILLISECONDS = 16;

/**
 * A ULID of `nowMs` (epoch milliseconds): ULIDs made in the same millisecond still sort in creation order (token
 * lists, delivery lists), even when ULIDs of other times come between. Each carries its own time: one factory for all
 * times would stamp every later ULID with the latest time it has seen, which an injected clock that moved back gets.
 */
function ulid(nowMs: number): string {
  let factory = factories.get(nowMs);
  if (!factory) {
    factory = monotonicFactory(pooledRandomFraction);
    factories.set(nowMs, factory);
    if (factories.size > RECENT_MILLISECONDS) factories.delete(factories.keys().next().value!);
  }
  return factory(nowMs);
}

/** A new domain object id: a random UUID v4 (DESIGN D12). */
export function newUuid(): string {
  return randomUUID();
}

/** The prefix of every event id (DESIGN D6). */
const EVENT_ID_PREFIX = 'evt_';

/** A new event id: {@link EVENT_ID_PREFIX} + ULID (DESIGN D6), time-ordered by `nowMs` (epoch milliseconds). */
export function newEventId(nowMs: number): string {
  return `${EVENT_ID_PREFIX}${ulid(nowMs)}`;
}

/** A new delivery id: `dlv_` + ULID (DESIGN D12). */
export function newDeliveryId(nowMs: number): string {
  return `dlv_${ulid(nowMs)}`;
}

/** A new message id: `msg_` + ULID (DESIGN D32), time-ordered by `nowMs` (epoch milliseconds). */
export function newMessageId(nowMs: number): string {
  return `msg_${ulid(nowMs)}`;
}

/** A new ULID (token ids, activity entries), time-ordered by `nowMs` (epoch milliseconds). */
export function newUlid(nowMs: number): string {
  return ulid(nowMs);
}

/** Crockford base32, 26 characters: the text of a ULID. */
const ULID_PATTERN = '[0-9A-HJKMNP-TV-Z]{26}';

/**
 * The id formats as zod schemas, written once (DESIGN D2, D6, D12): domain objects have UUIDs;
 * tokens a bare ULID; events, deliveries and activity entries a prefix and a ULID.
 */
export const IdSchemas = {
  /** A domain object id (UUID). */
  uuid: () => z.uuid(),
  /** A token id: a ULID (DESIGN D2). */
  token: () =>
    z
      .string()
      .check(
        z.regex(new RegExp(`^${ULID_PATTERN}$`), 'Expected a token id (a ULID).'),
        z.meta({ examples: ['01KAQ5N3M7Y2K8V0D6R4T1B9XZ'] }),
      ),
  /** A webhook delivery id: `dlv_` + ULID. */
  delivery: () =>
    z
      .string()
      .check(
        z.regex(new RegExp(`^dlv_${ULID_PATTERN}$`), 'Expected dlv_ followed by a ULID.'),
        z.meta({ examples: ['dlv_01KAQ5N3M7Y2K8V0D6R4T1B9XZ'] }),
      ),
  /** A webhook event id: `evt_` + ULID. */
  event: () =>
    z
      .string()
      .check(
        z.regex(new RegExp(`^${EVENT_ID_PREFIX}${ULID_PATTERN}$`), 'Expected evt_ followed by a ULID.'),
        z.meta({ examples: ['evt_01KAQ5N3M7Y2K8V0D6R4T1B9XZ'] }),
      ),
} as const;
