import type { InternalHandlersOf, OperationHandler } from '../../operations/handler.js';
import { cancelBatchJob, startBatchJob } from './batch-jobs.js';
import { accessCodesModule } from './operations.js';

type Operations = NonNullable<typeof accessCodesModule.internal>;

/** `generate_access_codes` as an MCP task (more than 100 codes): see `startBatchJob` in `./batch-jobs.ts`. */
const startAccessCodeBatchJob: OperationHandler<Operations['startAccessCodeBatchJob']> = async (
  input,
  { runtime, principal },
) => startBatchJob(runtime, principal, input);

/** `tasks/cancel` of an access code batch task: see `cancelBatchJob` in `./batch-jobs.ts`. */
const cancelAccessCodeBatchJob: OperationHandler<Operations['cancelAccessCodeBatchJob']> = async (
  input,
  { runtime, principal },
) => cancelBatchJob(runtime, principal, input.id);

/** Every handler of the access codes module's internal operations. */
export const accessCodesInternalHandlers = {
  startAccessCodeBatchJob,
  cancelAccessCodeBatchJob,
} satisfies InternalHandlersOf<typeof accessCodesModule>;
