/**
 * The tools published ahead of their domain (`shared/operations/not-implemented-tools.ts`): they answer
 * NOT_IMPLEMENTED whatever their arguments (isolation by construction); they are walked so that
 * implementing one without isolation fails. Valid arguments aimed at team B, so that the answer is about
 * isolation and not about validation. When a tool gets its operation, its case moves to its module's file.
 */
import { randomUUID } from 'node:crypto';
import { defineIsolationCases, type Expect } from './cases.js';

const NI: Expect = { code: 'NOT_IMPLEMENTED' };
const some = () => randomUUID();

export default defineIsolationCases({
  operations: {},
  tools: {
    list_payments: { foreign: { input: (w) => ({ project_id: w.b.project.id }), expect: NI } },
    get_payment: { foreign: { input: () => ({ id: some() }), expect: NI } },
    refund_payment: { foreign: { input: () => ({ id: some() }), expect: NI } },
  },
});
