import { NOT_FOUND, defineIsolationCases } from './cases.js';

const template = {
  delivery: 'preferred',
  email: { subject: 'Hijacked', body: 'Hijacked {{ project.name }}' },
  bot: { body: 'Hijacked' },
};

export default defineIsolationCases({
  operations: {
    listMessageTemplates: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NOT_FOUND } },
    getMessageTemplate: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, kind: 'welcome' }), expect: NOT_FOUND },
    },
    putMessageTemplate: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, kind: 'welcome', ...template }), expect: NOT_FOUND },
    },
    resetMessageTemplate: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, kind: 'welcome' }), expect: NOT_FOUND },
    },
    previewMessageTemplate: {
      foreign: { input: (w) => ({ project_id: w.b.project.id, kind: 'welcome' }), expect: NOT_FOUND },
    },
  },
});
