import { parseStoredCode } from '../oauth/records.js';
import { ITEM_ABSENT, conditionally } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Store } from './store.js';
import { housekeepingTtl } from './ttl.js';

/** A new authorization code as stored: its id, its secret's SHA-256 (hex) and what it is bound to. */
interface NewAuthorizationCode {
  id: string;
  secret_sha256: string;
  client_id: string;
  client_name: string | null;
  redirect_uri: string;
  code_challenge: string;
  resource: string;
  team_id: string;
  member_id: string;
  abilities: string[];
  project_ids: string[];
  /** Epoch MILLISECONDS after which the code is void. */
  expires_at_ms: number;
}

/**
 * The OAuth authorization codes' persistence (DESIGN D30): one item per code in a partition of its own, keyed by its
 * id (a ULID), holding the SHA-256 of its secret; used up once (`used_at`), a second presentation marked
 * (`reused_at`), linked to the grant it started (`grant_id`), removed by TTL a day after it expired.
 */
export const oauthAuthorizationCodeStore = {
  /**
   * Stores new code `code` (one conditional PutItem); its TTL (epoch seconds) follows `expires_at_ms` (epoch ms).
   * Throws ConditionFailedError when its id is taken.
   */
  async create(store: Store, code: NewAuthorizationCode): Promise<void> {
    await store.put({
      Item: {
        ...keys.oauthCode(code.id),
        entity: entity.oauthCode,
        ...code,
        expires_at: housekeepingTtl(code.expires_at_ms),
      },
      ConditionExpression: ITEM_ABSENT,
    });
  },

  /** The stored code `codeId` (one GetItem), used, expired or not, or undefined. */
  async find(store: Store, codeId: string) {
    const item = await store.get(keys.oauthCode(codeId));
    return item ? parseStoredCode(item) : undefined;
  },

  /** Uses up code `codeId` at `nowIso` (ISO 8601; one conditional UpdateItem): true once, false when already used. */
  async markUsed(store: Store, codeId: string, nowIso: string): Promise<boolean> {
    return conditionally(
      store.update({
        Key: keys.oauthCode(codeId),
        UpdateExpression: 'SET used_at = :now',
        ConditionExpression: 'attribute_not_exists(used_at)',
        ExpressionAttributeValues: { ':now': nowIso },
      }),
    );
  },

  /**
   * Marks code `codeId` presented again at `nowIso` (ISO 8601; one UpdateItem, the first time kept); returns the id of
   * the grant it started, or undefined when none was recorded yet.
   */
  async markReused(store: Store, codeId: string, nowIso: string): Promise<string | undefined> {
    const code = await store.update({
      Key: keys.oauthCode(codeId),
      UpdateExpression: 'SET reused_at = if_not_exists(reused_at, :now)',
      ExpressionAttributeValues: { ':now': nowIso },
      ReturnValues: 'ALL_NEW',
    });
    return code ? parseStoredCode(code).grant_id : undefined;
  },

  /** Records grant `grantId` as the one code `codeId` started (one UpdateItem). */
  async recordGrant(store: Store, codeId: string, grantId: string): Promise<void> {
    await store.update({
      Key: keys.oauthCode(codeId),
      UpdateExpression: 'SET grant_id = :grant',
      ExpressionAttributeValues: { ':grant': grantId },
    });
  },

  /** Whether code `codeId` was marked presented again (one GetItem); false for a code that is gone. */
  async wasReused(store: Store, codeId: string): Promise<boolean> {
    const item = await store.get(keys.oauthCode(codeId));
    return item?.reused_at !== undefined;
  },
};
