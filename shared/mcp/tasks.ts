/**
 * The MCP Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on the 2026-07-28 revision (DESIGN D5, D25): a
 * `tools/call` of a tool that starts a resumable job answers a task handle at once when the request's client
 * capabilities declare the extension; `tasks/get`, `tasks/update` and `tasks/cancel` read and stop the job behind it.
 * A task id is the job's kind and id (`webhook_replay_<uuid>`): no task store, and a task lives as long as its job. A
 * task is its team's: another team's token gets the unknown-task error. Requests without the extension get the tool's
 * usual result; the 2025 revisions never see tasks.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolErrorCode,
  type Server,
  type TaskStatus,
} from '@modelcontextprotocol/server';
import * as z from '../schemas/zod.js';
import type { Principal } from '../auth/principal.js';
import { toolDefinition, type ToolDefinition } from '../catalogues/tools.js';
import { cancelReplayJob, getReplayJob } from '../domain/webhook-replays/repository.js';
import type { WebhookReplay } from '../domain/webhook-replays/schema.js';
import { ProblemError } from '../errors.js';
import type { Runtime } from '../runtime.js';
import { canCall, type ToolCallResult, type ToolListing } from './tools.js';

/** The extension's identifier: a key of `extensions` in the client's per-request and the server's capabilities. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** How often a client should poll `tasks/get` (ms). */
const POLL_INTERVAL_MS = 2000;

/** The 2026-07-28 task state (SEP-2663 `Task`): `ttlMs` null, a task lives as long as its job. */
interface Task {
  [key: string]: unknown;
  taskId: string;
  status: TaskStatus;
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: null;
  pollIntervalMs: number;
}

/** A `tasks/get` answer (SEP-2663 `DetailedTask`): a completed task carries the tool's result. */
type DetailedTask = Task & { result?: ToolCallResult };

/** A tool that runs as a task: how its result names a running job, and how the job is read and stopped. */
interface TaskKind<Job> {
  /** The task id prefix of this kind's jobs. */
  prefix: string;
  tool: ToolDefinition;
  /** The tool result's job when it is still running (a task), else null (the result is final). */
  runningJob: (result: Record<string, unknown>) => Job | null;
  jobId: (job: Job) => string;
  /** The job of the principal's team; throws NOT_FOUND when absent or another team's. */
  load: (runtime: Runtime, principal: Principal, id: string) => Promise<Job>;
  /** Stops the job (no further step starts) and returns it; throws NOT_FOUND like {@link load}. */
  cancel: (runtime: Runtime, principal: Principal, id: string) => Promise<Job>;
  /** The job's task state; a completed job carries its final result. */
  detailed: (job: Job, taskId: string) => DetailedTask;
}

/** The text-and-structured tool result of a job, as the tool itself answers. */
function jobResult(job: object): ToolCallResult {
  return { content: [{ type: 'text', text: JSON.stringify(job) }], structuredContent: { ...job } };
}

const REPLAY_TASK_STATUS: Record<WebhookReplay['status'], TaskStatus> = {
  running: 'working',
  completed: 'completed',
  cancelled: 'cancelled',
};

/** `replay_dead_webhook_deliveries`: a running replay job (D25) is a task; its counts are the progress. */
const webhookReplayTasks: TaskKind<WebhookReplay> = {
  prefix: 'webhook_replay',
  tool: toolDefinition('replay_dead_webhook_deliveries')!,
  runningJob: (result) => (result.status === 'running' ? (result as unknown as WebhookReplay) : null),
  jobId: (job) => job.id,
  load: (runtime, principal, id) => getReplayJob(runtime, principal, id),
  cancel: (runtime, principal, id) => cancelReplayJob(runtime, principal, id),
  detailed: (job, taskId) => {
    const progress = `${job.replayed} of ${job.matched} deliveries re-queued`;
    const task: DetailedTask = {
      taskId,
      status: REPLAY_TASK_STATUS[job.status],
      statusMessage: job.status === 'cancelled' ? `Cancelled: ${progress}.` : `${progress}.`,
      createdAt: job.created_at,
      lastUpdatedAt: job.updated_at,
      ttlMs: null,
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    return job.status === 'completed' ? { ...task, result: jobResult(job) } : task;
  },
};

const TASK_KINDS: readonly TaskKind<WebhookReplay>[] = [webhookReplayTasks];

/** `<prefix>_<job uuid>`. */
const TASK_ID = /^([a-z_]+)_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

/** True when a 2026-07-28 request's `_meta` client capabilities declare the Tasks extension. */
export function declaresTasks(envelope: Record<string, unknown> | undefined): boolean {
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: Record<string, unknown> } | undefined;
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/**
 * The task handle (SEP-2663 `CreateTaskResult`, `resultType: "task"`) that answers a `tools/call` of `name` whose
 * `result` started a job still running; null for any other tool or result (the result answers as it is). Call it only
 * for requests that {@link declaresTasks}.
 */
export function taskHandleOf(name: string, result: ToolCallResult): Record<string, unknown> | null {
  if (result.isError) return null;
  const kind = TASK_KINDS.find((candidate) => candidate.tool.name === name);
  const job = kind?.runningJob(result.structuredContent);
  if (!kind || !job) return null;
  const { result: _none, ...task } = kind.detailed(job, `${kind.prefix}_${kind.jobId(job)}`);
  return { resultType: 'task', ...task };
}

/** The `params` of `tasks/get`, `tasks/update` and `tasks/cancel` (SEP-2663). */
const TaskParams = z.looseObject({ taskId: z.string().check(z.maxLength(200)) });

/** The JSON-RPC error of a task id that names no task of this token's team (SEP-2663: -32602). */
function taskNotFound(): Error {
  return Object.assign(new Error('Failed to retrieve task: Task not found'), { code: ProtocolErrorCode.InvalidParams });
}

/**
 * Serves the extension's methods on a 2026-07-28 `server` of `principal`, and declares the extension in its
 * capabilities (`server/discover`). Each method needs the extension in the request's client capabilities (-32021
 * otherwise) and the ability of the tool that started the task; `tasks/cancel` is refused in read-only mode. An id
 * that names no job of the team is -32602.
 */
export function serveTasks(server: Server, runtime: Runtime, principal: Principal, listing: ToolListing): void {
  server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });
  const task = async (params: { taskId: string }, envelope: Record<string, unknown> | undefined, write: boolean) => {
    if (!declaresTasks(envelope))
      throw new MissingRequiredClientCapabilityError({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    const match = TASK_ID.exec(params.taskId);
    const kind = TASK_KINDS.find((candidate) => candidate.prefix === match?.[1]);
    if (!match || !kind || !canCall(principal, kind.tool)) throw taskNotFound();
    if (write && listing.readOnly)
      throw Object.assign(new Error('This request is read-only: send tasks/cancel without read-only mode.'), {
        code: ProtocolErrorCode.InvalidRequest,
      });
    try {
      const job = await (write ? kind.cancel : kind.load)(runtime, principal, match[2]);
      return kind.detailed(job, params.taskId);
    } catch (error) {
      if (error instanceof ProblemError && error.code === 'NOT_FOUND') throw taskNotFound();
      throw error;
    }
  };
  const schemas = { params: TaskParams };
  server.setRequestHandler('tasks/get', schemas, async (params, context) =>
    task(params, context.mcpReq.envelope, false),
  );
  // No task of this server asks the client for input: answers to unknown input requests are ignored (SEP-2663).
  server.setRequestHandler('tasks/update', schemas, async (params, context) => {
    await task(params, context.mcpReq.envelope, false);
    return {};
  });
  server.setRequestHandler('tasks/cancel', schemas, async (params, context) => {
    await task(params, context.mcpReq.envelope, true);
    return {};
  });
}
