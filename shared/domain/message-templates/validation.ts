import { ProblemError, type FieldError } from '../../errors.js';
import { liquidFieldError } from './liquid.js';
import { messageVariables, type MessageContext } from './render.js';

/**
 * Checking a template before it is saved or previewed (DESIGN D32): each text must parse and render against a sample
 * context. A module of its own, imported on first use, so that liquidjs stays out of the routes that only read.
 */

/** The texts of a template that can be checked (each part optional). */
interface TemplateTexts {
  email?: { subject: string; body: string };
  bot?: { body: string };
}

/**
 * Throws VALIDATION_FAILED naming each text (`email.subject`, `email.body`, `bot.body`) that does not parse or render
 * against `context` (an unknown variable or filter included), with liquidjs's line and column.
 */
export function requireRenderable(texts: TemplateTexts, context: MessageContext): void {
  const variables = messageVariables(context);
  const errors = [
    texts.email && liquidFieldError('email.subject', texts.email.subject, variables),
    texts.email && liquidFieldError('email.body', texts.email.body, variables),
    texts.bot && liquidFieldError('bot.body', texts.bot.body, variables),
  ].filter((error): error is FieldError => Boolean(error));
  if (errors.length)
    throw new ProblemError('VALIDATION_FAILED', `The template does not render: ${errors[0].message}`, { errors });
}
