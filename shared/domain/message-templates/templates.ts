import type { MessageKind } from '../../catalogues/message-kinds.js';
import type { Runtime } from '../../runtime.js';

/** The template of one kind in a project: stored, or the default (placeholder until the templates module lands). */
export interface MessageTemplate {
  kind: MessageKind;
  delivery: 'preferred' | 'both';
  email: { subject: string; body: string };
  bot: { body: string };
  is_default: boolean;
  updated_at: string | null;
}

/** The project's template of `kind` (placeholder: always the default). */
export async function loadMessageTemplate(
  _runtime: Pick<Runtime, 'store'>,
  _teamId: string,
  _projectId: string,
  kind: MessageKind,
): Promise<MessageTemplate> {
  return {
    kind,
    delivery: 'preferred',
    email: { subject: `${kind} from {{ project.name }}`, body: '{{ links.recovery }}' },
    bot: { body: '{{ links.recovery }}' },
    is_default: true,
    updated_at: null,
  };
}
