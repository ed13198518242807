import type { Plan } from '../plans/schema.js';
import type { Project } from '../projects/schema.js';
import type { Subscriber } from '../subscribers/schema.js';
import type { Subscription } from '../subscriptions/schema.js';
import type { MessageTemplate } from './templates.js';

/** What a message is about (placeholder until the templates module lands). */
export interface MessageContext {
  project: Project;
  subscriber: Subscriber;
  plan: Plan | null;
  subscription: Subscription | null;
  links: {
    portal: string | null;
    recovery: string | null;
    sign_in: string | null;
    unsubscribe: string | null;
    join: string | null;
  };
  grace: { ends_at: string; day: number } | null;
  broadcast: { subject: string; body: string } | null;
}

/** Renders a template (placeholder: substitutes the recovery link only). */
export function renderMessage(
  template: MessageTemplate,
  target: 'email' | 'bot',
  context: MessageContext,
): { subject: string | null; text: string; html: string | null } {
  const fill = (text: string) =>
    text
      .replaceAll('{{ links.recovery }}', context.links.recovery ?? context.links.portal ?? '')
      .replaceAll('{{ project.name }}', context.project.name);
  return target === 'email'
    ? { subject: fill(template.email.subject), text: fill(template.email.body), html: null }
    : { subject: null, text: fill(template.bot.body), html: null };
}
