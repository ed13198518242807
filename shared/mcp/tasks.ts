/**
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the 2026-07-28 revision (DESIGN D5, D25): a
 * `tools/call` of a tool that starts a resumable job answers a task handle at once when the request's client
 * capabilities declare the extension; `tasks/get`, `tasks/update` and `tasks/cancel` read and stop the job behind it.
 * A task id is the job's kind and id (`webhook_replay_<uuid>`): no task store, and a task lives as long as its job. A
 * task is its team's: another team's token gets the unknown-task error. Requests without the extension get the tool's
 * usual result; the 2025 revisions never see tasks.
 */
import {
  CancelTaskRequestV2Schema,
  GetTaskRequestV2Schema,
  hasTaskClientCapabilityV2,
  TASKS_EXTENSION_ID_V2,
  type CompletedTaskV2,
  type CreateTaskResultV2,
  type DetailedTaskV2,
} from '@modelcontextprotocol/ext-tasks/core/v2';
import { MissingRequiredClientCapabilityError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import type { Principal } from '../auth/principal.js';
import { toolDefinition, type ToolDefinition } from '../catalogues/tools.js';
import { getReplayJob } from '../domain/webhook-replays/repository.js';
import { BATCH_JOB_TTL_SECONDS, INLINE_BATCH_MAX, type AccessCodeBatchJob } from '../domain/access-codes/batch-job.js';
import { readBatchJob, type BatchJobRead } from '../domain/access-codes/batch-jobs.js';
import { invokeOperation } from '../operations/invoke.js';
import { pipelineOperationById, type InternalOperationId, type OperationId } from '../operations/registry.js';
import type { WebhookReplay } from '../domain/webhook-replays/schema.js';
import { ProblemError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { mcpHandlerOf } from './handlers.js';
import { canCall, type ToolCallResult, type ToolListing } from './tools.js';

/** How often a client should poll `tasks/get` (ms). */
const POLL_INTERVAL_MS = 2000;

/** A tool that runs as a task: how its result names a running job, and how the job is read and stopped. */
interface TaskKind<Job> {
  /** The task id prefix of this kind's jobs. */
  prefix: string;
  tool: ToolDefinition;
  /**
   * For a tool that runs inline unless the client declares the extension: the operation that starts the job instead,
   * for the arguments it applies to (run with the tool's arguments, idempotency key and activity name).
   */
  start?: { operationId: InternalOperationId; applies(args: Record<string, unknown>): boolean };
  /** The tool result's job when it is still running (a task), else null (the result is final). */
  runningJob(result: Record<string, unknown>): Job | null;
  jobId(job: Job): string;
  /**
   * The job of the principal's team; throws NOT_FOUND when absent or another team's. `take`: the read of `tasks/get`,
   * which may take a result that is shown once.
   */
  load(runtime: Runtime, principal: Principal, id: string, take: boolean): Promise<Job>;
  /**
   * Stops the job (no further step starts) through its cancel operation, run by the pipeline on surface `mcp`, and
   * returns it; throws the operation's ProblemError (NOT_FOUND like {@link load}, CONFLICT once the job completed).
   */
  cancel(runtime: Runtime, principal: Principal, id: string, requestId: string): Promise<Job>;
  /** The job's task state; a completed job carries its final result. */
  detailed(job: Job, taskId: string): DetailedTaskV2;
}

/**
 * Runs a job's cancel operation `operationId` for `tasks/cancel` through the pipeline (surface `mcp`, activity
 * `tasks/cancel`) and returns its result; throws the operation's ProblemError.
 */
async function cancelThroughPipeline(
  operationId: OperationId | InternalOperationId,
  runtime: Runtime,
  principal: Principal,
  id: string,
  requestId: string,
): Promise<unknown> {
  const outcome = await invokeOperation({
    runtime,
    principal,
    operation: pipelineOperationById(operationId),
    handler: mcpHandlerOf(operationId),
    surface: 'mcp',
    requestId,
    activityName: 'tasks/cancel',
    successStatus: 200,
    decode: () => ({
      input: { id },
      idempotencyKey: null,
      fingerprint: [principal.tokenId, 'mcp', 'tasks/cancel', id],
      cursorField: 'params.taskId',
    }),
  });
  if (!outcome.ok) throw new ProblemError(outcome.problem.code, outcome.problem.detail);
  return outcome.result;
}

/** A tool result as a completed task's `result`. */
function toCompletedResult(result: ToolCallResult): CompletedTaskV2['result'] {
  return result as CompletedTaskV2['result'];
}

/** The text-and-structured tool result of a job, as the tool itself answers (the job is plain JSON). */
function jobResult(job: object): CompletedTaskV2['result'] {
  return toCompletedResult({ content: [{ type: 'text', text: JSON.stringify(job) }], structuredContent: { ...job } });
}

/** `replay_dead_webhook_deliveries`: a running replay job (D25) is a task; its counts are the progress. */
const webhookReplayTasks: TaskKind<WebhookReplay> = {
  prefix: 'webhook_replay',
  tool: toolDefinition('replay_dead_webhook_deliveries')!,
  runningJob: (result) => (result.status === 'running' ? (result as unknown as WebhookReplay) : null),
  jobId: (job) => job.id,
  load: (runtime, principal, id) => getReplayJob(runtime, principal, id),
  cancel: async (runtime, principal, id, requestId) =>
    (await cancelThroughPipeline('cancelWebhookReplay', runtime, principal, id, requestId)) as WebhookReplay,
  detailed: (job, taskId) => {
    const progress = `${job.replayed} of ${job.matched} deliveries re-queued`;
    const task = {
      taskId,
      statusMessage: job.status === 'cancelled' ? `Cancelled: ${progress}.` : `${progress}.`,
      createdAt: job.created_at,
      lastUpdatedAt: job.updated_at,
      ttlMs: null,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    if (job.status === 'completed') return { ...task, status: 'completed', result: jobResult(job) };
    return { ...task, status: job.status === 'running' ? 'working' : 'cancelled' };
  },
};

/**
 * `generate_access_codes` of more than {@link INLINE_BATCH_MAX} codes: a batch job (D18) is a task; its codes are in
 * the completed task's result of the first `tasks/get` that reads it, and never again.
 */
const accessCodeBatchTasks: TaskKind<BatchJobRead> = {
  prefix: 'access_code_batch',
  tool: toolDefinition('generate_access_codes')!,
  start: {
    operationId: 'startAccessCodeBatchJob',
    applies: (args) => typeof args.count === 'number' && args.count > INLINE_BATCH_MAX,
  },
  runningJob: (result) =>
    result.status === 'running' && 'requested' in result
      ? { job: result as unknown as AccessCodeBatchJob, result: null }
      : null,
  jobId: (read) => read.job.id,
  load: (runtime, principal, id, take) => readBatchJob(runtime, principal, id, take),
  cancel: async (runtime, principal, id, requestId) => ({
    job: (await cancelThroughPipeline(
      'cancelAccessCodeBatchJob',
      runtime,
      principal,
      id,
      requestId,
    )) as AccessCodeBatchJob,
    result: null,
  }),
  detailed: ({ job, result }, taskId) => {
    const progress = `${job.written} of ${job.requested} codes written`;
    const task = {
      taskId,
      createdAt: job.created_at,
      lastUpdatedAt: job.updated_at,
      ttlMs: BATCH_JOB_TTL_SECONDS * 1000,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    if (job.status === 'running') return { ...task, status: 'working', statusMessage: `${progress}.` };
    if (job.status === 'cancelled')
      return { ...task, status: 'cancelled', statusMessage: `Cancelled: ${progress}; they were deleted.` };
    if (job.status === 'failed')
      return {
        ...task,
        status: 'failed',
        statusMessage: `Failed: ${job.problem?.detail ?? 'the batch could not be written'}`,
        error: { code: ProtocolErrorCode.InternalError, message: job.problem?.detail ?? 'Failed.', data: job.problem },
      };
    const shown = result?.shown ?? false;
    const note = 'The codes were shown once, to an earlier tasks/get, and are no longer stored.';
    const generated = result?.generated ?? { batch: null, codes: [] };
    const completed = shown
      ? jobResult(generated)
      : toCompletedResult({
          content: [
            { type: 'text', text: JSON.stringify(generated) },
            { type: 'text', text: note },
          ],
          structuredContent: { ...generated },
        });
    return {
      ...task,
      status: 'completed',
      statusMessage: shown ? `${progress}.` : `${progress}. ${note}`,
      result: completed,
    };
  },
};

const TASK_KINDS: readonly TaskKind<unknown>[] = [webhookReplayTasks, accessCodeBatchTasks];

/** `<prefix>_<job uuid>`. */
const TASK_ID = /^([a-z_]+)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/**
 * The operation that starts tool `name`'s job as a task for these arguments (a client that declared the extension),
 * or null: the tool runs as usual.
 */
export function taskStartOf(name: string, args: Record<string, unknown> | undefined): InternalOperationId | null {
  const start = TASK_KINDS.find((candidate) => candidate.tool.name === name)?.start;
  return start && args && start.applies(args) ? start.operationId : null;
}

/** True when a 2026-07-28 request's `_meta` envelope (the SDK's `ctx.mcpReq.envelope`) declares the Tasks extension. */
export function declaresTasks(envelope: object | undefined): boolean {
  return hasTaskClientCapabilityV2({ _meta: envelope });
}

/**
 * The task handle (SEP-2663 `CreateTaskResult`, `resultType: "task"`) that answers a `tools/call` of `name` whose
 * `result` started a job still running; null for any other tool or result (the result answers as it is). Call it only
 * for requests that {@link declaresTasks}.
 */
export function taskHandleOf(name: string, result: ToolCallResult): CreateTaskResultV2 | null {
  if (result.isError) return null;
  const kind = TASK_KINDS.find((candidate) => candidate.tool.name === name);
  const job = kind?.runningJob(result.structuredContent);
  if (!kind || !job) return null;
  const { taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs } = kind.detailed(
    job,
    `${kind.prefix}_${kind.jobId(job)}`,
  );
  return { resultType: 'task', taskId, status, statusMessage, createdAt, lastUpdatedAt, ttlMs, pollIntervalMs };
}

/** The JSON-RPC error of a task id that names no task of this token's team (SEP-2663: -32602). */
function taskNotFound(): Error {
  return Object.assign(new Error('Failed to retrieve task: Task not found'), { code: ProtocolErrorCode.InvalidParams });
}

/**
 * Serves the extension's methods on a 2026-07-28 `server` of `principal`, and declares the extension in its
 * capabilities (`server/discover`). Each method needs the extension in the request's client capabilities (-32021
 * otherwise) and the ability of the tool that started the task; `tasks/cancel` runs the job's cancel operation through
 * the pipeline (activity, billing lockdown) and is refused in read-only mode. An id that names no job of the team, and
 * the cancel of a completed task, are -32602.
 */
export function serveTasks(
  server: Server,
  runtime: Runtime,
  principal: Principal,
  listing: ToolListing,
  requestId: string,
): void {
  server.registerCapabilities({ extensions: { [TASKS_EXTENSION_ID_V2]: {} } });
  const task = async (
    params: { taskId: string },
    envelope: object | undefined,
    method: 'get' | 'update' | 'cancel',
  ) => {
    const write = method === 'cancel';
    if (!declaresTasks(envelope))
      throw new MissingRequiredClientCapabilityError({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION_ID_V2]: {} } },
      });
    const match = TASK_ID.exec(params.taskId);
    const kind = TASK_KINDS.find((candidate) => candidate.prefix === match?.[1]);
    if (!match || !kind || !canCall(principal, kind.tool)) throw taskNotFound();
    if (write && listing.readOnly)
      throw Object.assign(new Error('This request is read-only: send tasks/cancel without read-only mode.'), {
        code: ProtocolErrorCode.InvalidRequest,
      });
    try {
      const job = await (write
        ? kind.cancel(runtime, principal, match[2], requestId)
        : kind.load(runtime, principal, match[2], method === 'get'));
      return kind.detailed(job, params.taskId);
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      if (error.code === 'NOT_FOUND') throw taskNotFound();
      // A completed task cannot be cancelled (SEP-2663: -32602); a locked team's cancel is refused with its reason.
      throw Object.assign(new Error(error.detail), { code: ProtocolErrorCode.InvalidParams });
    }
  };
  server.setRequestHandler(
    'tasks/get',
    { params: GetTaskRequestV2Schema.shape.params },
    async (params, context) => (await task(params, context.mcpReq.envelope, 'get')) as Record<string, unknown>,
  );
  // No task of this server asks the client for input: answers to unknown input requests are ignored (SEP-2663). The
  // SDK moves `inputResponses` out of `params` (to `ctx.mcpReq.inputResponses`): only the task id is left to check.
  server.setRequestHandler('tasks/update', { params: GetTaskRequestV2Schema.shape.params }, async (params, context) => {
    await task(params, context.mcpReq.envelope, 'update');
    return {};
  });
  server.setRequestHandler(
    'tasks/cancel',
    { params: CancelTaskRequestV2Schema.shape.params },
    async (params, context) => {
      await task(params, context.mcpReq.envelope, 'cancel');
      return {};
    },
  );
}
