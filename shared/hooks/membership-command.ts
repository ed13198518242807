import type { SubscriptionStatus } from '../catalogues/subscription-statuses.js';
import { portalSessionsInternalHandlers } from '../domain/portal-sessions/internal-handlers.js';
import { portalSessionsInternalOperations } from '../domain/portal-sessions/internal-operations.js';
import { anyHandler } from '../operations/handler.js';
import type { Runtime } from '../runtime.js';
import { runBotCommand } from './bot-command.js';

/** What the bot answers a platform user (see {@link membershipCommand}). */
type MembershipCommandAnswer =
  { found: true; status: SubscriptionStatus | null; url: string } | { found: false; status: null; url: null };

/**
 * The bot command that answers with a portal link (DESIGN D27, D28, D35), one use case for Telegram's `/account` and
 * Discord's `/membership`: `answerMembershipCommand` run by the pipeline as the verified hook (surface `portal`), its
 * idempotency key derived from the platform's update or interaction id, so a re-sent one replays the same link.
 * Throws when the operation failed (the hook answers 5xx).
 */
export async function membershipCommand(
  runtime: Runtime,
  command: {
    source: 'telegram' | 'discord';
    teamId: string;
    projectId: string;
    platformUserId: string;
    /** The platform's update or interaction id; null when the request carries none (no replay). */
    eventId: string | null;
  },
): Promise<MembershipCommandAnswer> {
  // Imported by name, not through the registry, so a hook's bundle holds only this operation (DESIGN D23).
  const operation = portalSessionsInternalOperations.answerMembershipCommand;
  const input = { project_id: command.projectId, platform_user_id: command.platformUserId };
  return (await runBotCommand(
    runtime,
    command,
    operation,
    anyHandler(portalSessionsInternalHandlers.answerMembershipCommand),
    input,
  )) as MembershipCommandAnswer;
}
