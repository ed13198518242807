import type { Principal } from '../../auth/principal.js';
import { requireAbility } from '../../auth/authorize.js';
import type { MessageKind } from '../../catalogues/message-kinds.js';
import { ProblemError } from '../../errors.js';
import type { UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { getPlan, listPlans } from '../plans/repository.js';
import type { Plan } from '../plans/schema.js';
import type { Project } from '../projects/schema.js';
import { getSubscriber } from '../subscribers/repository.js';
import type { Subscriber } from '../subscribers/schema.js';
import { listSubscriptions } from '../subscriptions/queries.js';
import type { Subscription } from '../subscriptions/schema.js';
import { renderMessage } from './render.js';
import { callersProject } from './repository.js';
import { requireRenderable } from './validation.js';
import { sampleContext } from './sample.js';
import type { MessagePreview, PreviewMessageTemplateRequest } from './schema.js';
import { loadMessageTemplate } from './templates.js';

/**
 * Previewing a template (DESIGN D32): the given texts, or the saved or default ones, rendered for e-mail and for a bot
 * against a subscriber of the project (with their latest subscription and its plan) or a sample.
 */

/** The real parts of a preview's context: the subscriber asked for, their first subscription and its plan. */
async function realParts(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  project: Project,
  subscriberId: string | undefined,
): Promise<{ subscriber?: Subscriber; plan?: Plan; subscription?: Subscription }> {
  if (!subscriberId) {
    const plans = await listPlans(runtime.store, principal, project.id, { limit: 1, status: 'active' });
    return plans.data[0] ? { plan: plans.data[0] } : {};
  }
  // A real subscriber's name shows in the preview: reading one needs the ability to read subscribers.
  requireAbility(principal, 'project-user:view');
  const subscriber = await getSubscriber(runtime.store, principal, subscriberId).catch((error: unknown) => {
    if (error instanceof ProblemError && error.code === 'NOT_FOUND') return null;
    throw error;
  });
  if (!subscriber || subscriber.project_id !== project.id)
    throw new ProblemError('NOT_FOUND', `Project ${project.id} has no subscriber ${subscriberId}.`);
  const subscriptions = await listSubscriptions(runtime.store, principal, project.id, {
    subscriber_id: subscriberId,
    limit: 1,
  });
  const subscription = subscriptions.data[0];
  if (!subscription) return { subscriber };
  return { subscriber, subscription, plan: await getPlan(runtime.store, principal, subscription.plan_id) };
}

/**
 * `POST /v1/projects/{project_id}/message-templates/{kind}/preview`: renders the given texts (each absent part: the
 * saved or default one). Errors: NOT_FOUND (project, or a subscriber not of the project); VALIDATION_FAILED naming the
 * text, line and column.
 */
export async function previewMessageTemplate(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  kind: MessageKind,
  input: PreviewMessageTemplateRequest,
): Promise<MessagePreview> {
  const project = await callersProject(runtime, principal, projectId);
  const [saved, real] = await Promise.all([
    loadMessageTemplate(runtime, principal.teamId, projectId, kind),
    realParts(runtime, principal, project, input.subscriber_id),
  ]);
  const context = sampleContext(kind, project, runtime.clock.nowMs(), real);
  requireRenderable({ email: input.email, bot: input.bot }, context);
  const template = { ...saved, email: input.email ?? saved.email, bot: input.bot ?? saved.bot };
  const email = renderMessage(template, 'email', context);
  const bot = renderMessage(template, 'bot', context);
  return {
    kind,
    subscriber_id: real.subscriber?.id ?? null,
    email: { subject: email.subject ?? '', text: email.text, html: email.html ?? '' },
    bot: { text: bot.text },
  };
}
