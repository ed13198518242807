import type { Principal } from '../../auth/principal.js';
import type { MessageKind } from '../../catalogues/message-kinds.js';
import { isoTime } from '../../clock.js';
import { messageTemplateStore } from '../../store/message-templates.js';
import { unitOfWork, type UnitOfWorkRuntime } from '../../store/unit-of-work.js';
import { loadProject, toProject } from '../projects/repository.js';
import type { Project } from '../projects/schema.js';
import { sampleContext } from './sample.js';
import type { MessageTemplate, PutMessageTemplateRequest } from './schema.js';
import { defaultMessageTemplate, loadMessageTemplate, loadMessageTemplates } from './templates.js';

/**
 * The message template use cases (DESIGN D32): list and read a project's templates (saved or default), save one after
 * checking it renders against a sample (validation.ts), and reset one to the default. Every call first checks that the
 * project is the caller's (NOT_FOUND alike for a missing, foreign or out-of-scope project).
 */

/** The caller's project (NOT_FOUND when absent, foreign or outside the token's projects). */
export async function callersProject(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
): Promise<Project> {
  return toProject(await loadProject(runtime.store, principal, projectId));
}

/** `GET /v1/projects/{project_id}/message-templates`: every kind's template, saved or default, in catalogue order. */
export async function listMessageTemplates(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
): Promise<{ data: MessageTemplate[] }> {
  await callersProject(runtime, principal, projectId);
  return { data: await loadMessageTemplates(runtime, principal.teamId, projectId) };
}

/** `GET /v1/projects/{project_id}/message-templates/{kind}`: the saved template of the kind, or the default. */
export async function getMessageTemplate(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  kind: MessageKind,
): Promise<MessageTemplate> {
  await callersProject(runtime, principal, projectId);
  return loadMessageTemplate(runtime, principal.teamId, projectId, kind);
}

/**
 * `PUT /v1/projects/{project_id}/message-templates/{kind}`: saves the template after rendering each text against a
 * sample of the project. Errors: NOT_FOUND; VALIDATION_FAILED naming the text, line and column.
 */
export async function putMessageTemplate(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  kind: MessageKind,
  input: PutMessageTemplateRequest,
): Promise<MessageTemplate> {
  const project = await callersProject(runtime, principal, projectId);
  const nowMs = runtime.clock.nowMs();
  // Liquid is loaded on first use, in its own chunk: the routes that only read templates never load it (DESIGN D23).
  const { requireRenderable } = await import('./validation.js');
  requireRenderable(input, sampleContext(kind, project, nowMs));
  const template: MessageTemplate = { kind, ...input, is_default: false, updated_at: isoTime(nowMs) };
  return unitOfWork(runtime, principal.teamId, (tx) => {
    messageTemplateStore.write(tx, principal.teamId, {
      project_id: projectId,
      kind,
      delivery: template.delivery,
      email: template.email,
      bot: template.bot,
      updated_at: template.updated_at as string,
    });
    return template;
  });
}

/**
 * `DELETE /v1/projects/{project_id}/message-templates/{kind}`: forgets the saved template, so the default applies
 * again (also when none was saved). Answers the default. Errors: NOT_FOUND.
 */
export async function resetMessageTemplate(
  runtime: UnitOfWorkRuntime,
  principal: Principal,
  projectId: string,
  kind: MessageKind,
): Promise<MessageTemplate> {
  await callersProject(runtime, principal, projectId);
  return unitOfWork(runtime, principal.teamId, (tx) => {
    messageTemplateStore.remove(tx, principal.teamId, projectId, kind);
    return defaultMessageTemplate(kind);
  });
}
