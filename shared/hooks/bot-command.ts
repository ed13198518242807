import { randomUUID } from 'node:crypto';
import type { PipelineOperation } from '../operations/definition.js';
import { derivedIdempotencyKey } from '../limits/idempotency.js';
import type { AnyHandler } from '../operations/handler.js';
import { invokeOperation } from '../operations/invoke.js';
import type { Runtime } from '../runtime.js';
import { hookPrincipal } from './principal.js';

/** Where a bot command came from: the platform, the project's team and project, and the platform's update id. */
export interface BotCommandSource {
  source: 'telegram' | 'discord';
  teamId: string;
  projectId: string;
  /** The platform's update or interaction id; null when the request carries none (no replay). */
  eventId: string | null;
}

/**
 * Runs a bot command's internal operation through the pipeline as the verified hook (surface `portal`, DESIGN D35),
 * its idempotency key derived from the platform's update id and `keyPart`, so a re-sent update replays the first
 * answer. Resolves the operation's result; throws when it failed (the hook answers 5xx and the platform sends again).
 */
export async function runBotCommand(
  runtime: Runtime,
  from: BotCommandSource,
  operation: PipelineOperation,
  handler: AnyHandler,
  input: Record<string, unknown>,
  keyPart = '',
): Promise<unknown> {
  const outcome = await invokeOperation({
    runtime,
    principal: hookPrincipal(from.teamId, from.source),
    operation,
    handler,
    surface: 'portal',
    requestId: `${from.source}:${from.eventId ?? randomUUID()}`,
    decode: () => ({
      input,
      idempotencyKey:
        from.eventId === null
          ? null
          : derivedIdempotencyKey(`${from.source}:${from.projectId}:${keyPart}${from.eventId}`),
      fingerprint: [`hook:${from.source}`, operation.id, JSON.stringify(input)],
      cursorField: 'body.cursor',
    }),
  });
  if (!outcome.ok) throw new Error(`${operation.id} failed: ${outcome.problem.code}`);
  return outcome.result;
}
