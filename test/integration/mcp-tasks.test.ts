/**
 * The Tasks extension (`io.modelcontextprotocol/tasks`) on MCP 2026-07-28 (DESIGN D5, D25): a replay of dead deliveries
 * called by a client that declares the extension answers a task at once; `tasks/get` reports the job's progress and
 * final result, `tasks/cancel` stops it (a batch in flight still counts what it re-queued); another team's token finds
 * no such task; a client without the extension gets the job as before. Through `handleMcpHttpRequest` on DynamoDB
 * Local, the replay worker run by hand, with the v2 client package and raw requests (it has no task helpers).
 */
import { randomUUID } from 'node:crypto';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../../shared/auth/principal.js';
import type { ManualClock } from '../../shared/clock.js';
import { createProject } from '../../shared/domain/projects/creation.js';
import { processDeliveryMessage } from '../../shared/domain/webhook-deliveries/dispatcher.js';
import { getDelivery } from '../../shared/domain/webhook-deliveries/reads.js';
import { relayOutbox } from '../../shared/domain/webhook-deliveries/sweeper.js';
import { createWebhookEndpoint, updateWebhookEndpoint } from '../../shared/domain/webhook-endpoints/changes.js';
import { getReplayJob } from '../../shared/domain/webhook-replays/repository.js';
import { listActivity } from '../../shared/domain/activity/repository.js';
import { handleMcpHttpRequest } from '../../shared/mcp/http-handler.js';
import { TASKS_EXTENSION_ID_V2 as TASKS_EXTENSION } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { Runtime } from '../../shared/runtime.js';
import { rest } from '../support/calls.js';
import { MCP_URL, MODERN, modernRpc } from '../support/mcp-raw.js';
import { createTestRuntime, seedTeam, testClock, type TestRuntime } from '../support/store.js';

let clock: ManualClock;
let runtime: TestRuntime;
let principal: Principal;
let token: string;

beforeEach(async () => {
  clock = testClock({ secondsIntoMinute: 5 });
  runtime = await createTestRuntime({ clock });
  ({ principal, token } = await seedTeam(runtime.store, clock));
  await relayOutbox(runtime, clock.nowMs()); // the team's own team.created, to no endpoint yet
});

/** `count` dead deliveries to a new endpoint (disabled while their first attempt ran, then enabled again). */
async function deadDeliveries(count: number): Promise<string[]> {
  const endpoint = await createWebhookEndpoint(runtime, principal, {
    name: `hook ${randomUUID().slice(0, 8)}`,
    url: 'https://receiver.example/hooks',
    events: ['project.created'],
  });
  for (let index = 0; index < count; index++)
    await createProject(runtime, principal, { name: `Project ${index}`, platform_type: 'discord' });
  await relayOutbox(runtime, clock.nowMs());
  const messages = runtime.drain().queued.map((entry) => entry.message);
  await updateWebhookEndpoint(runtime, principal, endpoint.id, { is_active: false });
  for (const message of messages) await processDeliveryMessage(runtime, message);
  await updateWebhookEndpoint(runtime, principal, endpoint.id, { is_active: true });
  runtime.drain();
  return messages.map((message) => message.delivery_id);
}

/** Runs the replay jobs' batch messages until none is left (the background worker's role), on `on`. */
async function runReplayBatches(on: Runtime = runtime): Promise<string[]> {
  const outcomes: string[] = [];
  for (let batch = runtime.replayBatches.shift(); batch; batch = runtime.replayBatches.shift())
    outcomes.push(await processDeliveryMessage(on, batch));
  return outcomes;
}

/** One raw 2026-07-28 request (declaring the Tasks extension unless `tasks` is false) with the test team's token. */
function rpc(method: string, params: Record<string, unknown>, options: { bearer?: string; tasks?: boolean } = {}) {
  return modernRpc(runtime, options.bearer ?? token, method, params, {
    tasks: options.tasks,
    clientName: 'tasks-test',
    clientIp: '198.51.100.40',
  });
}

/** Calls `replay_dead_webhook_deliveries` over the last hour. */
function replay(options: { tasks?: boolean } = {}) {
  return rpc(
    'tools/call',
    { name: 'replay_dead_webhook_deliveries', arguments: { since_hours: 1, idempotency_key: randomUUID() } },
    options,
  );
}

describe('Tasks extension (2026-07-28)', () => {
  it('declares the extension in server/discover', async () => {
    const discovered = await rpc('server/discover', {});
    expect(discovered.result.capabilities.extensions).toEqual({ [TASKS_EXTENSION]: {} });
  });

  it('answers a replay with a task at once, reports its progress, then its result', async () => {
    await deadDeliveries(3);
    const created = await replay();
    expect(created.result).toMatchObject({
      resultType: 'task',
      taskId: expect.stringMatching(/^webhook_replay_[0-9a-f-]{36}$/),
      status: 'working',
      statusMessage: '0 of 3 deliveries re-queued.',
      ttlMs: null,
      pollIntervalMs: 2000,
    });
    const { taskId } = created.result;
    const jobId = taskId.slice('webhook_replay_'.length);
    expect(await getReplayJob(runtime, principal, jobId)).toMatchObject({ status: 'running', matched: 3 });

    const working = await rpc('tasks/get', { taskId });
    expect(working.result).toMatchObject({ resultType: 'complete', taskId, status: 'working' });
    expect(working.result.result).toBeUndefined();

    expect(await runReplayBatches()).toEqual(['replay_completed']);
    const done = await rpc('tasks/get', { taskId });
    expect(done.result).toMatchObject({
      resultType: 'complete',
      taskId,
      status: 'completed',
      statusMessage: '3 of 3 deliveries re-queued.',
      result: { structuredContent: { id: jobId, status: 'completed', matched: 3, replayed: 3 } },
    });
    expect(JSON.parse(done.result.result.content[0].text)).toEqual(done.result.result.structuredContent);
    // A completed task cannot be cancelled: -32602, naming the state, and the job stays completed.
    const late = await rpc('tasks/cancel', { taskId });
    expect(late.error).toMatchObject({ code: -32602, message: expect.stringContaining('is completed') });
    expect(await getReplayJob(runtime, principal, jobId)).toMatchObject({ status: 'completed', replayed: 3 });
    // Answers to input requests no task asked for are acknowledged and ignored.
    const updated = await rpc('tasks/update', { taskId, inputResponses: { unasked: { action: 'decline' } } });
    expect(updated.result).toMatchObject({
      resultType: 'complete',
    });
  });

  it('cancels a task: no batch runs and the deliveries stay dead', async () => {
    const deliveryIds = await deadDeliveries(2);
    const { taskId } = (await replay()).result;
    expect((await rpc('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({
      status: 'cancelled',
      statusMessage: 'Cancelled: 0 of 2 deliveries re-queued.',
    });
    expect(await runReplayBatches()).toEqual(['skipped']);
    for (const id of deliveryIds) expect((await getDelivery(runtime, principal, id)).status).toBe('dead');
    expect(await getReplayJob(runtime, principal, taskId.slice('webhook_replay_'.length))).toMatchObject({
      status: 'cancelled',
      replayed: 0,
    });
    // Cancelling again is acknowledged and changes nothing.
    expect((await rpc('tasks/cancel', { taskId })).result).toMatchObject({ resultType: 'complete' });
    // Each cancel ran the cancel operation through the pipeline: one activity entry each, surface mcp.
    const { data } = await listActivity(runtime.store, principal.teamId, { limit: 100 });
    expect(data.filter((entry) => entry.operation === 'tasks/cancel')).toEqual([
      expect.objectContaining({ surface: 'mcp', outcome: 'ok', status: 200 }),
      expect.objectContaining({ surface: 'mcp', outcome: 'ok', status: 200 }),
    ]);
  });

  it('a batch in flight when the task is cancelled still counts what it re-queued, and none follows', async () => {
    await deadDeliveries(3);
    const { taskId } = (await replay()).result;
    // The worker hands its re-queued deliveries to the queue before recording its progress: the cancel lands between.
    const cancelling: Runtime = {
      ...runtime,
      deliveryQueue: {
        send: async (messages, delaySeconds) => {
          if (messages.some((message) => message.kind === 'attempt'))
            expect((await rpc('tasks/cancel', { taskId })).status).toBe(200);
          await runtime.deliveryQueue.send(messages, delaySeconds);
        },
      },
    };
    expect(await runReplayBatches(cancelling)).toEqual(['skipped']);
    expect((await rpc('tasks/get', { taskId })).result).toMatchObject({
      status: 'cancelled',
      statusMessage: 'Cancelled: 3 of 3 deliveries re-queued.',
    });
    expect(runtime.replayBatches).toEqual([]);
  });

  it('cancels over REST too: POST /v1/webhook-replays/{id}/cancel; a completed replay is a CONFLICT', async () => {
    await deadDeliveries(2);
    const started = await rest(runtime, {
      method: 'POST',
      path: '/v1/webhook-deliveries/replay-dead',
      token,
      body: { since_hours: 24 },
    });
    expect(started.status, started.text).toBe(202);
    const { id } = started.json as { id: string };
    const cancel = () => rest(runtime, { method: 'POST', path: `/v1/webhook-replays/${id}/cancel`, token });
    const cancelled = await cancel();
    expect(cancelled.status, cancelled.text).toBe(200);
    expect(cancelled.json).toMatchObject({ id, status: 'cancelled', replayed: 0 });
    expect(await runReplayBatches()).toEqual(['skipped']);

    await deadDeliveries(1);
    const next = await rest(runtime, {
      method: 'POST',
      path: '/v1/webhook-deliveries/replay-dead',
      token,
      body: { since_hours: 24 },
    });
    expect(await runReplayBatches()).toEqual(['replay_completed']);
    const late = await rest(runtime, {
      method: 'POST',
      path: `/v1/webhook-replays/${(next.json as { id: string }).id}/cancel`,
      token,
    });
    expect(late.status).toBe(409);
    expect(late.json).toMatchObject({ code: 'CONFLICT', detail: expect.stringContaining('is completed') });
  });

  it("another team's token finds no such task, and cannot cancel it", async () => {
    await deadDeliveries(1);
    const { taskId } = (await replay()).result;
    const other = await seedTeam(runtime.store, clock);
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const refused = await rpc(method, { taskId }, { bearer: other.token });
      expect(refused.error).toEqual({ code: -32602, message: 'Failed to retrieve task: Task not found' });
    }
    expect((await rpc('tasks/get', { taskId })).result.status).toBe('working');
    const unknown = await rpc('tasks/get', { taskId: `webhook_replay_${randomUUID()}` });
    expect(unknown.error?.code).toBe(-32602);
  });

  it('a client without the extension gets the job as before, and no task methods', async () => {
    await deadDeliveries(2);
    expect((await replay({ tasks: false })).result).toMatchObject({
      resultType: 'complete',
      structuredContent: { status: 'running', matched: 2, replayed: 0 },
    });

    const client = new ModernClient(
      { name: 'v2-no-tasks', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(
      new ModernTransport(new URL(MCP_URL), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
        fetch: (url, init) => handleMcpHttpRequest(runtime, new Request(url, init), { clientIp: '198.51.100.41' }),
      }),
    );
    const result = await client.callTool({ name: 'replay_dead_webhook_deliveries', arguments: { since_hours: 1 } });
    expect(result.structuredContent).toMatchObject({ status: 'running', matched: 2, replayed: 0 });
    await client.close();

    const { taskId } = (await replay()).result;
    const refused = await rpc('tasks/get', { taskId }, { tasks: false });
    expect(refused.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });
});
