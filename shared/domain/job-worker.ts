import type { JobMessage, Runtime } from '../runtime.js';
import type { AccessAuditPageOutcome } from './access-audits/worker.js';
import type { AccessCodeBatchOutcome } from './access-codes/batch-job-worker.js';
import type { ImportPageOutcome } from './imports/worker.js';
import type { BroadcastBatchOutcome } from './messages/broadcast-worker.js';
import type { MessageSendOutcome } from './messages/sending.js';

/** Outcome of {@link processJobMessage}, for logs and tests. */
export type JobOutcome =
  MessageSendOutcome | BroadcastBatchOutcome | ImportPageOutcome | AccessAuditPageOutcome | AccessCodeBatchOutcome;

/**
 * Handles one job-queue message (DESIGN D7, D32, D34): `message_send`, `broadcast_batch`, `import_page`,
 * `access_audit_page` or `access_code_batch`. Each job's item is the source of truth, so a duplicate or stale message
 * does nothing twice. Throws on store errors (the queue retries). Each worker loads on first use, so a job worker that
 * only sends messages never loads the Stripe import or the chat platforms' audit code (D23).
 */
export async function processJobMessage(runtime: Runtime, message: JobMessage): Promise<JobOutcome> {
  switch (message.kind) {
    case 'message_send':
      return (await import('./messages/sending.js')).processMessageSend(runtime, message);
    case 'broadcast_batch':
      return (await import('./messages/broadcast-worker.js')).processBroadcastBatch(runtime, message);
    case 'import_page':
      return (await import('./imports/worker.js')).processImportPage(runtime, message);
    case 'access_audit_page':
      return (await import('./access-audits/worker.js')).processAccessAuditPage(runtime, message);
    case 'access_code_batch':
      return (await import('./access-codes/batch-job-worker.js')).processAccessCodeBatch(runtime, message);
  }
}
