import { describe, expect, it, vi } from 'vitest';
import { manualClock } from '../../shared/clock.js';
import { ProblemError } from '../../shared/errors.js';
import type { AnyOperation } from '../../shared/operations/definition.js';
import { invokeOperation, type Invocation } from '../../shared/operations/invoke.js';
import type { Runtime } from '../../shared/runtime.js';
import { TransactionCanceledError } from '../../shared/store/store.js';

/**
 * The pipeline's own decisions, with no store: a public operation (no principal) records no activity and
 * claims no key, so nothing here reaches DynamoDB. Authorization, idempotency and activity are covered by
 * the integration tests of every surface.
 */
const operation = {
  id: 'readThing',
  ability: null,
  rest: { method: 'GET', path: '/v1/things', successStatus: 200 },
  events: [],
} as unknown as AnyOperation;
const runtime = { clock: manualClock(0) } as unknown as Runtime;

/** The same operation as a write (POST): everything before its handler must pass first. */
const writeOperation = {
  ...operation,
  rest: { method: 'POST', path: '/v1/things', successStatus: 201 },
} as AnyOperation;

/** Runs `handler` as the public read (or `options.operation`) through the pipeline, with request id `req-1`. */
function invoke(
  handler: Invocation['handler'],
  options: Partial<Pick<Invocation, 'admit' | 'decode'>> & { operation?: AnyOperation } = {},
) {
  return invokeOperation({
    runtime,
    principal: null,
    operation: options.operation ?? operation,
    handler,
    surface: 'rest',
    requestId: 'req-1',
    admit: options.admit,
    decode:
      options.decode ?? (() => ({ input: {}, idempotencyKey: null, fingerprint: [], cursorField: 'query.cursor' })),
  });
}

describe('invokeOperation', () => {
  it('runs admit, then decode, then the handler with the decoded input', async () => {
    const order: string[] = [];
    const handler = vi.fn(async (input: Record<string, unknown>) => {
      order.push('handler');
      return { echoed: input.name };
    });
    const outcome = await invokeOperation({
      runtime,
      principal: null,
      operation,
      handler,
      surface: 'rest',
      requestId: 'req-1',
      admit: () => void order.push('admit'),
      decode: () => {
        order.push('decode');
        return { input: { name: 'x' }, idempotencyKey: null, fingerprint: [], cursorField: 'query.cursor' };
      },
    });
    expect(outcome).toEqual({ ok: true, result: { echoed: 'x' }, replayed: false });
    expect(order).toEqual(['admit', 'decode', 'handler']);
  });

  it('stops a write at a refusal of admit or decode: the handler never runs', async () => {
    const handler = vi.fn(async () => ({}));
    const refused = await invoke(handler, {
      operation: writeOperation,
      admit: () => {
        throw new ProblemError('RATE_LIMITED', 'Slow down.', { headers: { 'Retry-After': '3' } });
      },
    });
    expect(refused).toMatchObject({
      ok: false,
      problem: { code: 'RATE_LIMITED', status: 429, request_id: 'req-1' },
      headers: { 'Retry-After': '3' },
    });
    const invalid = await invoke(handler, {
      operation: writeOperation,
      decode: () => {
        throw new ProblemError('VALIDATION_FAILED', 'Bad.', { errors: [{ path: 'query.limit', message: 'Too big.' }] });
      },
    });
    expect(invalid).toMatchObject({
      ok: false,
      problem: { code: 'VALIDATION_FAILED', errors: [{ path: 'query.limit' }] },
    });
    expect(handler).not.toHaveBeenCalled();
  });

  it('runs a read beside admit, and answers admit’s refusal instead of the read’s result or failure', async () => {
    const admission = Promise.withResolvers<void>();
    const handler = vi.fn(async () => ({ secret: 'not for a refused caller' }));
    const pending = invoke(handler, { admit: () => admission.promise });
    await vi.waitFor(() => expect(handler).toHaveBeenCalledOnce());
    admission.reject(new ProblemError('RATE_LIMITED', 'Slow down.', { headers: { 'Retry-After': '3' } }));
    const refused = await pending;
    expect(refused).toMatchObject({ ok: false, problem: { code: 'RATE_LIMITED', status: 429 } });
    expect(JSON.stringify(refused)).not.toContain('not for a refused caller');
    const failed = await invoke(
      async () => {
        throw new ProblemError('NOT_FOUND', 'No such thing.');
      },
      { admit: () => Promise.reject(new ProblemError('RATE_LIMITED', 'Slow down.')) },
    );
    expect(failed).toMatchObject({ ok: false, problem: { code: 'RATE_LIMITED' } });
  });

  it('answers a transaction that kept being cancelled by concurrent ones with CONFLICT, not an internal error', async () => {
    const outcome = await invoke(async () => {
      throw new TransactionCanceledError(['None', 'TransactionConflict']);
    });
    expect(outcome).toMatchObject({ ok: false, problem: { code: 'CONFLICT', status: 409 } });
  });

  it('answers an unexpected failure with INTERNAL_ERROR, never its message', async () => {
    const outcome = await invoke(async () => {
      throw new Error('disk on fire at 10.0.0.7');
    });
    expect(outcome).toMatchObject({ ok: false, problem: { code: 'INTERNAL_ERROR', status: 500 } });
    expect(JSON.stringify(outcome)).not.toContain('10.0.0.7');
  });

  it('names the cursor field when the store refuses a cursor of another list', async () => {
    const outcome = await invoke(
      async () => {
        throw Object.assign(new Error('The provided starting key is invalid'), { name: 'ValidationException' });
      },
      {
        decode: () => ({
          input: { cursor: 'abc' },
          idempotencyKey: null,
          fingerprint: [],
          cursorField: 'arguments.cursor',
        }),
      },
    );
    expect(outcome).toMatchObject({
      ok: false,
      problem: { code: 'VALIDATION_FAILED', errors: [{ path: 'arguments.cursor' }] },
    });
  });
});
