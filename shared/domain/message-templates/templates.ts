import { MESSAGE_KIND_VALUES, type MessageKind } from '../../catalogues/message-kinds.js';
import type { Runtime } from '../../runtime.js';
import { messageTemplateStore } from '../../store/message-templates.js';
import type { Item } from '../../store/requests.js';
import { DEFAULT_TEXTS } from './defaults.js';
import { parseStoredMessageTemplate } from './record.js';
import type { MessageTemplate } from './schema.js';

/**
 * A project's templates (DESIGN D32): the saved one of a kind, or the service's default when the creator saved none.
 * `MessageTemplate` is the schema's type, re-exported here beside {@link loadMessageTemplate} for the sender.
 */
export type { MessageTemplate } from './schema.js';

/** The service's default template of `kind` (delivery `preferred`). */
export function defaultMessageTemplate(kind: MessageKind): MessageTemplate {
  const texts = DEFAULT_TEXTS[kind];
  return {
    kind,
    delivery: 'preferred',
    email: { subject: texts.subject, body: texts.email },
    bot: { body: texts.bot },
    is_default: true,
    updated_at: null,
  };
}

/** The template of a saved item. */
function toMessageTemplate(item: Item): MessageTemplate {
  const stored = parseStoredMessageTemplate(item);
  return { ...stored, is_default: false };
}

/** The template of one kind in a project, stored or the default (one strongly consistent read; no access check). */
export async function loadMessageTemplate(
  runtime: Pick<Runtime, 'store'>,
  teamId: string,
  projectId: string,
  kind: MessageKind,
): Promise<MessageTemplate> {
  const item = await messageTemplateStore.read(runtime.store, teamId, projectId, kind);
  return item ? toMessageTemplate(item) : defaultMessageTemplate(kind);
}

/** Every kind's template of a project in catalogue order, stored or default (one BatchGetItem; no access check). */
export async function loadMessageTemplates(
  runtime: Pick<Runtime, 'store'>,
  teamId: string,
  projectId: string,
): Promise<MessageTemplate[]> {
  const items = await messageTemplateStore.readMany(runtime.store, teamId, projectId, MESSAGE_KIND_VALUES);
  const saved = new Map(items.map((item) => toMessageTemplate(item)).map((template) => [template.kind, template]));
  return MESSAGE_KIND_VALUES.map((kind) => saved.get(kind) ?? defaultMessageTemplate(kind));
}
