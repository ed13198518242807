import { messagesInternalHandlers } from '../domain/messages/handlers.js';
import { messagesModule } from '../domain/messages/operations.js';
import { anyHandler } from '../operations/handler.js';
import type { Runtime } from '../runtime.js';
import { runBotCommand } from './bot-command.js';

/** The bot command that gives a portal link, per platform. */
const MANAGE_COMMAND = { telegram: '/account', discord: '/membership' } as const;

/** What a bot answers `/start` and `/stop` on `platform`, by whether the platform user is a subscriber. */
export function messagingAnswer(platform: 'telegram' | 'discord', command: 'start' | 'stop', found: boolean): string {
  const name = platform === 'telegram' ? 'Telegram' : 'Discord';
  if (command === 'start')
    return found
      ? `Hello! You will get your membership\u2019s notices here. Send ${MANAGE_COMMAND[platform]} to manage it, /stop to get only the essential ones.`
      : `Hello! No membership was found for your ${name} account here yet. Send ${MANAGE_COMMAND[platform]} once you have joined.`;
  return found
    ? 'Done: you will only get essential notices (failed payments, access removed) from now on. Send /start to get them all again.'
    : `No membership was found for your ${name} account here, so there is nothing to stop.`;
}

/**
 * The bots' `/start` and `/stop` (DESIGN D32, D35): `recordBotCommand` run by the pipeline as the verified hook, its
 * idempotency key derived from the platform's update id. Resolves whether the platform user is linked to a
 * subscriber; throws when the operation failed (the hook answers 5xx and the platform sends the update again).
 */
export async function botMessagingCommand(
  runtime: Runtime,
  command: {
    source: 'telegram' | 'discord';
    teamId: string;
    projectId: string;
    platformUserId: string;
    command: 'start' | 'stop';
    /** The platform's update id; null when the request carries none (no replay). */
    eventId: string | null;
  },
): Promise<{ found: boolean }> {
  const operation = messagesModule.internal.recordBotCommand;
  const input = { project_id: command.projectId, platform_user_id: command.platformUserId, command: command.command };
  return (await runBotCommand(
    runtime,
    command,
    operation,
    anyHandler(messagesInternalHandlers.recordBotCommand),
    input,
    `${command.command}:`,
  )) as { found: boolean };
}
