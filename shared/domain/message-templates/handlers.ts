import type { HandlersOf, OperationHandler } from '../../operations/handler.js';
import { messageTemplatesModule } from './operations.js';
import {
  getMessageTemplate as read,
  listMessageTemplates as list,
  putMessageTemplate as put,
  resetMessageTemplate as reset,
} from './repository.js';

type Operations = typeof messageTemplatesModule.operations;

/** `GET /v1/projects/{project_id}/message-templates`. */
export const listMessageTemplates: OperationHandler<Operations['listMessageTemplates']> = async (
  input,
  { runtime, principal },
) => list(runtime, principal, input.project_id);

/** `GET /v1/projects/{project_id}/message-templates/{kind}`. */
export const getMessageTemplate: OperationHandler<Operations['getMessageTemplate']> = async (
  input,
  { runtime, principal },
) => read(runtime, principal, input.project_id, input.kind);

/** `PUT /v1/projects/{project_id}/message-templates/{kind}`. */
export const putMessageTemplate: OperationHandler<Operations['putMessageTemplate']> = async (
  { project_id, kind, ...template },
  { runtime, principal },
) => put(runtime, principal, project_id, kind, template);

/** `DELETE /v1/projects/{project_id}/message-templates/{kind}`. */
export const resetMessageTemplate: OperationHandler<Operations['resetMessageTemplate']> = async (
  input,
  { runtime, principal },
) => reset(runtime, principal, input.project_id, input.kind);

/**
 * `POST /v1/projects/{project_id}/message-templates/{kind}/preview`; the preview (and liquidjs with it) is loaded on
 * first use, in a chunk of its own (DESIGN D23 bundle budgets).
 */
export const previewMessageTemplate: OperationHandler<Operations['previewMessageTemplate']> = async (
  { project_id, kind, ...request },
  { runtime, principal },
) => (await import('./preview.js')).previewMessageTemplate(runtime, principal, project_id, kind, request);

/** Every handler of the message templates module. */
export const messageTemplatesHandlers = {
  listMessageTemplates,
  getMessageTemplate,
  putMessageTemplate,
  resetMessageTemplate,
  previewMessageTemplate,
} satisfies HandlersOf<typeof messageTemplatesModule>;
