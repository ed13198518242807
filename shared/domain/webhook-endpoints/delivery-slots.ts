import { isoTime } from '../../clock.js';
import type { Runtime } from '../../runtime.js';
import type { Store } from '../../store/store.js';
import { endpointSlots } from '../../store/webhook-endpoints/slots.js';
import { AUTO_DISABLE_THRESHOLD } from './policy.js';
import type { StoredWebhookEndpoint } from './record.js';
import { rememberWebhookEndpoint } from './repository.js';

/**
 * What delivery attempts decide on their endpoint (DESIGN D8, D24): auto-disable after failures, and taking a
 * concurrency slot (reclaiming expired ones once); the writes are `endpointSlots`' (shared/store).
 */

/**
 * Counts one failed attempt on its endpoint and gives back the delivery's slot, in one update
 * (interface "States", DESIGN D8, D24); the failure that reaches {@link AUTO_DISABLE_THRESHOLD} disables
 * the endpoint (`is_active=false`, `disabled_at`), and so does a `gone` answer (410, DESIGN D29) at once.
 * A deleted endpoint or a lost race is ignored. Throws only on store errors.
 */
export async function recordFailedAttempt(
  runtime: Pick<Runtime, 'store' | 'clock'>,
  teamId: string,
  endpointId: string,
  deliveryId: string,
  options: { gone?: boolean } = {},
): Promise<void> {
  if (options.gone) {
    const now = isoTime(runtime.clock.nowMs());
    await endpointSlots.countFailureAndDisable(runtime.store, teamId, endpointId, deliveryId, now);
    return;
  }
  const failures = await endpointSlots.countFailure(runtime.store, teamId, endpointId, deliveryId);
  if (failures !== null && failures >= AUTO_DISABLE_THRESHOLD) {
    const now = isoTime(runtime.clock.nowMs());
    await endpointSlots.disableAfterFailures(runtime.store, teamId, endpointId, AUTO_DISABLE_THRESHOLD, now);
  }
}

/** What {@link acquireDeliverySlot} found: a slot (with the endpoint as stored), a full cap, or no active endpoint. */
export type SlotAcquisition =
  { kind: 'acquired'; endpoint: StoredWebhookEndpoint } | { kind: 'full' } | { kind: 'stopped' };

/**
 * Takes an endpoint concurrency slot for `deliveryId` until `leaseUntilMs` (epoch ms) in one conditional update that
 * returns the endpoint (D24, D14); expired slots are reclaimed once when full. Returns `acquired`, `full` or `stopped`
 * (deleted or disabled). Throws only on store errors.
 */
export async function acquireDeliverySlot(
  store: Store,
  teamId: string,
  endpointId: string,
  deliveryId: string,
  leaseUntilMs: number,
  nowMs: number,
): Promise<SlotAcquisition> {
  for (let round = 0; ; round++) {
    const take = await endpointSlots.take(store, teamId, endpointId, deliveryId, leaseUntilMs);
    if ('taken' in take) {
      rememberWebhookEndpoint(store, take.taken);
      return { kind: 'acquired', endpoint: take.taken };
    }
    const current = take.refused;
    if (!current || !current.is_active) return { kind: 'stopped' };
    const expired = Object.entries(current.in_flight).filter(([, until]) => until < nowMs);
    if (round > 0 || expired.length === 0) return { kind: 'full' };
    await endpointSlots.reclaim(store, teamId, endpointId, expired);
  }
}

/**
 * Why {@link endpointSlots.item} was refused, from the endpoint as found (`undefined`: deleted) and the
 * copy it was built from: `stopped` (deleted or disabled), `stale` (the copy is of another revision:
 * build the item again from the endpoint as found), `reclaim` (full, but
 * holding slots whose lease ran out before `nowMs`, epoch ms: take the slot the long way, which
 * reclaims them) or `full`.
 */
export function slotRefusal(
  endpoint: StoredWebhookEndpoint | undefined,
  used: StoredWebhookEndpoint,
  nowMs: number,
): 'stopped' | 'stale' | 'reclaim' | 'full' {
  if (!endpoint || !endpoint.is_active) return 'stopped';
  if (endpoint.revision !== used.revision) return 'stale';
  return Object.values(endpoint.in_flight).some((until) => until < nowMs) ? 'reclaim' : 'full';
}
