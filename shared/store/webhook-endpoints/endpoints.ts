import type { ProblemError } from '../../errors.js';
import type { SealedSecret } from '../../credentials/envelope.js';
import { parseStoredWebhookEndpoint, type StoredWebhookEndpoint } from '../../domain/webhook-endpoints/record.js';
import { entity, keys, sortKeyPrefix } from '../keys.js';
import { ConditionFailedError, type Store } from '../store.js';
import { queryPage, type Page } from '../pages.js';
import type { Item } from '../requests.js';
import type { Transaction } from '../unit-of-work.js';
import { ITEM_EXISTS, ITEM_ABSENT, RAISE_REVISION } from '../expressions.js';

/**
 * The webhook endpoint item's persistence (DESIGN D6, D8, D14): `TEAM#<team>`, `WEBHOOK_ENDPOINT#<uuid>`.
 * Reads, the team's paged list, and the writes of the endpoint's use cases; the attempt counters and
 * concurrency slots are in `slots.ts`. Every write that changes how deliveries are sent raises `revision`.
 */

/** Endpoint fields a change may set (`updated_at` and `revision` are always written). */
export type EndpointFields = Partial<
  Pick<
    StoredWebhookEndpoint,
    | 'name'
    | 'url'
    | 'events'
    | 'allowed_ips'
    | 'max_concurrency'
    | 'owner_token_id'
    | 'owner_abilities'
    | 'is_active'
    | 'consecutive_failures'
    | 'disabled_at'
  >
>;

/**
 * What {@link webhookEndpointStore.rotateSecrets} writes: the new sealed secrets, until when the previous one still
 * signs (epoch ms or null), the time.
 */
export interface SecretRotation {
  sealed: SealedSecret;
  previousExpiresAtMs: number | null;
  nowIso: string;
  /** The ciphertext of the secrets read before rotating: the write is refused when they changed meanwhile. */
  readCiphertext: string;
}

/**
 * The webhook endpoint store adapter: an endpoint's read and the team's list, its insertion and deletion added to a
 * transaction, and its changes and secrets' rotation (Store port).
 */
export const webhookEndpointStore = {
  /**
   * The stored endpoint (with its sealed secrets), strongly consistent, or null. Throws StoredRecordError for an item
   * that does not match.
   */
  async load(store: Store, teamId: string, endpointId: string): Promise<StoredWebhookEndpoint | null> {
    const item = await store.get(keys.webhookEndpoint(teamId, endpointId), { consistent: true });
    return item ? parseStoredWebhookEndpoint(item) : null;
  },

  /**
   * One strongly consistent page of the team's stored endpoints, in id order, optionally only active (true) or disabled
   * (false) ones (a filtered page may hold fewer than `limit`). Errors: VALIDATION_FAILED for a foreign cursor.
   */
  page(
    store: Store,
    teamId: string,
    page: { limit: number; cursor?: string; is_active?: boolean },
  ): Promise<Page<StoredWebhookEndpoint>> {
    return queryPage(store, {
      partition: keys.teamPartition(teamId),
      sortKeyPrefix: sortKeyPrefix.webhookEndpoint,
      limit: page.limit,
      cursor: page.cursor,
      consistent: true,
      map: parseStoredWebhookEndpoint,
      filter:
        page.is_active === undefined
          ? undefined
          : { expression: 'is_active = :is_active', values: { ':is_active': page.is_active } },
    });
  },

  /** Adds a new endpoint's item to `tx`, on condition that no item has its key. */
  insert(tx: Transaction, endpoint: StoredWebhookEndpoint): void {
    tx.put(
      { ...keys.webhookEndpoint(endpoint.team_id, endpoint.id), entity: entity.webhookEndpoint, ...endpoint },
      { condition: ITEM_ABSENT },
    );
  },

  /** Adds the deletion of an endpoint to `tx`; `missing` is the problem thrown when it does not exist. */
  remove(tx: Transaction, teamId: string, endpointId: string, missing: () => ProblemError): void {
    tx.delete(keys.webhookEndpoint(teamId, endpointId), { condition: ITEM_EXISTS, onConditionFailed: missing });
  },

  /**
   * Sets `fields`, `updated_at = nowIso` and raises the revision; returns the endpoint as changed, or null when it
   * does not exist. With `disable`, `is_active` becomes false and `disabled_at` becomes `nowIso` only if the endpoint
   * was active (a disabled one keeps its first `disabled_at`: two updates, the second unguarded).
   */
  async change(
    store: Store,
    teamId: string,
    endpointId: string,
    fields: EndpointFields,
    nowIso: string,
    options: { disable?: boolean } = {},
  ): Promise<StoredWebhookEndpoint | null> {
    const sets = ['updated_at = :now', RAISE_REVISION.clause];
    const values: Record<string, unknown> = { ':now': nowIso, ...RAISE_REVISION.values };
    const names: Record<string, string> = {};
    for (const [field, value] of Object.entries({ ...fields, ...(options.disable ? { is_active: false } : {}) })) {
      names[`#${field}`] = field;
      values[`:${field}`] = value;
      sets.push(`#${field} = :${field}`);
    }
    // `disabled_at` is stored as NULL while active, so `if_not_exists` cannot tell "never disabled".
    const update = (setDisabledAt: boolean) =>
      store.update({
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: `SET ${[...sets, ...(setDisabledAt ? ['disabled_at = :now'] : [])].join(', ')}`,
        ConditionExpression: setDisabledAt ? `${ITEM_EXISTS} AND #is_active = :was_active` : ITEM_EXISTS,
        ExpressionAttributeNames: Object.keys(names).length ? names : undefined,
        ExpressionAttributeValues: setDisabledAt ? { ...values, ':was_active': true } : values,
        ReturnValues: 'ALL_NEW',
      });
    try {
      let attributes: Item | undefined;
      try {
        attributes = await update(options.disable === true);
      } catch (error) {
        if (!(options.disable && error instanceof ConditionFailedError)) throw error;
        attributes = await update(false);
      }
      return parseStoredWebhookEndpoint(attributes!);
    } catch (error) {
      if (error instanceof ConditionFailedError) return null;
      throw error;
    }
  },

  /**
   * Replaces the sealed secrets (DESIGN D8, D16) and raises the revision, on condition that they are still the ones
   * read (`readCiphertext`), so two concurrent rotations cannot both keep a stale previous secret. Returns the
   * endpoint as changed, or null when the condition failed (rotated concurrently, or deleted).
   */
  async rotateSecrets(
    store: Store,
    teamId: string,
    endpointId: string,
    rotation: SecretRotation,
  ): Promise<StoredWebhookEndpoint | null> {
    try {
      const attributes = await store.update({
        Key: keys.webhookEndpoint(teamId, endpointId),
        UpdateExpression: `SET sealed_secrets = :sealed, previous_secret_expires_at_ms = :expires, updated_at = :now, ${RAISE_REVISION.clause}`,
        ConditionExpression: 'sealed_secrets.ciphertext = :current',
        ExpressionAttributeValues: {
          ':sealed': rotation.sealed,
          ':expires': rotation.previousExpiresAtMs,
          ':now': rotation.nowIso,
          ':current': rotation.readCiphertext,
          ...RAISE_REVISION.values,
        },
        ReturnValues: 'ALL_NEW',
      });
      return parseStoredWebhookEndpoint(attributes!);
    } catch (error) {
      if (error instanceof ConditionFailedError) return null;
      throw error;
    }
  },
};
