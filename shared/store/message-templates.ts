import { deleteItemsUnder, readByIds } from './expressions.js';
import { entity, keys } from './keys.js';
import type { Item } from './requests.js';
import type { Store } from './store.js';
import type { Transaction } from './unit-of-work.js';

/**
 * The message template store (DESIGN D14, D32): one item per project and message kind in the team's partition
 * (`MESSAGE_TEMPLATE#<project>#<kind>`), written only when the creator saves a template; no item means the default.
 */

/** The fields of a saved template as stored. */
interface StoredTemplateFields {
  project_id: string;
  kind: string;
  delivery: string;
  email: { subject: string; body: string };
  bot: { body: string };
  updated_at: string;
}

/**
 * The message template store adapter: reads of a project's saved templates (Store port), a template's put and deletion
 * added to a transaction, and `removeAll` for a deleted project.
 */
export const messageTemplateStore = {
  /** The stored template of a project's kind (strongly consistent), or undefined when it uses the default. */
  async read(store: Store, teamId: string, projectId: string, kind: string): Promise<Item | undefined> {
    return store.get(keys.messageTemplate(teamId, projectId, kind));
  },

  /** The stored templates among `kinds` of a project (strongly consistent), in no particular order. */
  async readMany(store: Store, teamId: string, projectId: string, kinds: readonly string[]): Promise<Item[]> {
    return readByIds(store, kinds, (kind) => keys.messageTemplate(teamId, projectId, kind));
  },

  /** Adds to `tx` the put of a saved template (replacing the one stored before, if any). */
  write(tx: Transaction, teamId: string, template: StoredTemplateFields): void {
    tx.put({
      ...keys.messageTemplate(teamId, template.project_id, template.kind),
      entity: entity.messageTemplate,
      team_id: teamId,
      ...template,
    });
  },

  /** Deletes every saved template of a (deleted) project, outside any transaction. Returns how many. */
  async removeAll(store: Store, teamId: string, projectId: string): Promise<number> {
    const { pk, sk } = keys.messageTemplate(teamId, projectId, '');
    return deleteItemsUnder(store, pk, sk);
  },

  /** Adds to `tx` the deletion of a project's saved template of `kind` (nothing happens when there is none). */
  remove(tx: Transaction, teamId: string, projectId: string, kind: string): void {
    tx.delete(keys.messageTemplate(teamId, projectId, kind));
  },
};
