import { defineModule, defineOperation } from '../../operations/definition.js';
import {
  MessagePreview,
  MessageTemplate,
  MessageTemplateList,
  MessageTemplateParams,
  MessageTemplateProjectParams,
  PreviewMessageTemplateRequest,
  PutMessageTemplateRequest,
} from './schema.js';

/**
 * The message template operations (DESIGN D13, D32): a project's templates, one per message kind, saved or default;
 * saving checks that every text renders against a sample. REST only: the tool server keeps the interface's tools.
 */
export const messageTemplatesModule = defineModule({
  folder: 'message-templates',
  operations: {
    listMessageTemplates: defineOperation({
      id: 'listMessageTemplates',
      summary: 'List a project’s message templates: every kind, saved or default.',
      tag: 'Message templates',
      ability: 'project:view',
      teamWide: false,
      params: MessageTemplateProjectParams,
      output: MessageTemplateList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/message-templates', successStatus: 200 },
    }),
    getMessageTemplate: defineOperation({
      id: 'getMessageTemplate',
      summary: 'Read the template of one message kind in a project (the default when none was saved).',
      tag: 'Message templates',
      ability: 'project:view',
      teamWide: false,
      params: MessageTemplateParams,
      output: MessageTemplate,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/message-templates/{kind}', successStatus: 200 },
    }),
    putMessageTemplate: defineOperation({
      id: 'putMessageTemplate',
      summary:
        'Save the template of one message kind: delivery, e-mail subject and body, bot text (Liquid; each must render against a sample, else VALIDATION_FAILED with line and column).',
      tag: 'Message templates',
      ability: 'project:update',
      teamWide: false,
      params: MessageTemplateParams,
      body: PutMessageTemplateRequest,
      output: MessageTemplate,
      events: [],
      rest: { method: 'PUT', path: '/v1/projects/{project_id}/message-templates/{kind}', successStatus: 200 },
    }),
    resetMessageTemplate: defineOperation({
      id: 'resetMessageTemplate',
      summary: 'Forget the saved template of one message kind: the default applies again (answers it).',
      tag: 'Message templates',
      ability: 'project:update',
      teamWide: false,
      params: MessageTemplateParams,
      output: MessageTemplate,
      events: [],
      rest: { method: 'DELETE', path: '/v1/projects/{project_id}/message-templates/{kind}', successStatus: 200 },
    }),
    previewMessageTemplate: defineOperation({
      id: 'previewMessageTemplate',
      summary:
        'Render a template (the given texts, or the saved or default ones) for e-mail and for a bot, for a sample or a given subscriber; changes nothing.',
      tag: 'Message templates',
      ability: 'project:view',
      teamWide: false,
      params: MessageTemplateParams,
      body: PreviewMessageTemplateRequest,
      output: MessagePreview,
      events: [],
      // A preview changes nothing, so a locked team may still use it (DESIGN D20).
      lockdown: 'exempt',
      rest: {
        method: 'POST',
        path: '/v1/projects/{project_id}/message-templates/{kind}/preview',
        successStatus: 200,
      },
    }),
  },
});
