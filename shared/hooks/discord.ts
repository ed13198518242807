import { InteractionResponseFlags, InteractionResponseType, InteractionType, verifyKey } from 'discord-interactions';
import { logger } from '../logger.js';
import { DISCORD_CREDENTIAL } from '../platforms/discord.js';
import type { Runtime } from '../runtime.js';
import * as z from '../schemas/zod.js';
import { openHookCredential } from './credential.js';
import type { HookAnswer, HookHandler } from './hook.js';
import { botMessagingCommand, messagingAnswer } from './bot-messaging.js';
import { membershipCommand } from './membership-command.js';
import { claimReceipt } from './receipts.js';

/**
 * The Discord interactions hook, `POST /hooks/discord/{project_id}` (DESIGN D28). The Ed25519 signature is verified
 * first with the bot's public key; unknown project, no Discord bot and bad signature get the same 401 after the same
 * work, and so does an interaction signed more than {@link FRESHNESS_MS} from now or whose id was answered already
 * (a replay: its receipt, DESIGN D22). PING → PONG; `/membership` → an ephemeral reply with a one-time portal link;
 * `/stop` and `/start` → the messaging preference (DESIGN D32) and an ephemeral confirmation; others "not supported".
 */

/** How far an interaction's signed timestamp may be from now, in milliseconds (either way): 5 minutes. */
const FRESHNESS_MS = 5 * 60 * 1000;

/** The interaction types the hook answers (numbers, as the body carries them). */
const PING: number = InteractionType.PING;
const APPLICATION_COMMAND: number = InteractionType.APPLICATION_COMMAND;

const REFUSED: HookAnswer = { status: 401, body: { error: 'The request signature is missing or wrong.' } };
/** A valid Ed25519 public key verified against when the project has none, so every refusal costs a verification. */
const NO_PUBLIC_KEY = '1dce32b3674efcdfb834a0f7c25d413b24da1e346a51691b2256bbfd1c70f11a';

/** The reply to a Discord user with no membership in the project (says nothing about who is a subscriber). */
const NO_MEMBERSHIP_REPLY = 'No membership found for your Discord account in this community.';

const DiscordUser = z.object({ id: z.string() });
/** The part of an interaction the hook reads. */
const Interaction = z.object({
  id: z.optional(z.string().check(z.maxLength(64))),
  type: z.number().check(z.int()),
  data: z.optional(z.object({ name: z.optional(z.string()) })),
  member: z.optional(z.object({ user: z.optional(DiscordUser) })),
  user: z.optional(DiscordUser),
});

/** An ephemeral message answer (`CHANNEL_MESSAGE_WITH_SOURCE`, flags `EPHEMERAL`). */
function ephemeral(content: string): HookAnswer {
  return {
    status: 200,
    body: {
      type: InteractionResponseType.CHANNEL_MESSAGE_WITH_SOURCE,
      data: { content, flags: InteractionResponseFlags.EPHEMERAL },
    },
  };
}

/**
 * The `/membership` answer (the {@link membershipCommand} use case): the membership's status and a fresh one-time
 * portal link (DESIGN D27), or {@link NO_MEMBERSHIP_REPLY}.
 */
async function membershipReply(
  runtime: Runtime,
  command: { teamId: string; projectId: string; userId: string | undefined; interactionId: string | null },
): Promise<HookAnswer> {
  if (!command.userId) return ephemeral(NO_MEMBERSHIP_REPLY);
  const answer = await membershipCommand(runtime, {
    source: 'discord',
    teamId: command.teamId,
    projectId: command.projectId,
    platformUserId: command.userId,
    eventId: command.interactionId,
  });
  if (!answer.found) return ephemeral(NO_MEMBERSHIP_REPLY);
  const status = answer.status
    ? `Your membership is ${answer.status.replace(/_/g, ' ')}.`
    : 'You have no subscription in this community yet.';
  return ephemeral(`${status}\nManage it here (the link works once, for 30 minutes): ${answer.url}`);
}

/**
 * Handles one request to `POST /hooks/discord/{project_id}` (see the module comment). Answers 200 with an
 * interaction response, 401 (any refusal of the signature), 400 (not an interaction) or 500. Never throws.
 */
export const discordHook: HookHandler = async (runtime, request) => {
  try {
    const credential = await openHookCredential(runtime, request.projectId, DISCORD_CREDENTIAL);
    const publicKey = credential?.description.public.public_key;
    const signature = request.headers['x-signature-ed25519'] ?? '';
    const timestamp = request.headers['x-signature-timestamp'] ?? '';
    const valid = await verifyKey(request.body, signature, timestamp, publicKey ?? NO_PUBLIC_KEY).catch(() => false);
    if (!valid || !credential || !publicKey) return REFUSED;
    const signedAtMs = Number(timestamp) * 1000;
    if (!Number.isFinite(signedAtMs) || Math.abs(runtime.clock.nowMs() - signedAtMs) > FRESHNESS_MS) return REFUSED;
    let interaction: z.infer<typeof Interaction>;
    try {
      interaction = Interaction.parse(JSON.parse(request.body));
    } catch {
      return { status: 400, body: { error: 'The body is not a Discord interaction.' } };
    }
    if (interaction.type === PING) return { status: 200, body: { type: InteractionResponseType.PONG } };
    if (interaction.id !== undefined) {
      const ref = {
        teamId: credential.description.team_id,
        source: 'discord-interaction',
        projectId: credential.description.project_id,
        providerEventId: interaction.id,
      };
      if (!(await claimReceipt(runtime.store, ref, runtime.clock.nowMs()))) return REFUSED;
    }
    if (interaction.type === APPLICATION_COMMAND && interaction.data?.name === 'membership') {
      const userId = interaction.member?.user?.id ?? interaction.user?.id;
      return await membershipReply(runtime, {
        teamId: credential.description.team_id,
        projectId: credential.description.project_id,
        userId,
        interactionId: interaction.id ?? null,
      });
    }
    const name = interaction.data?.name;
    if (interaction.type === APPLICATION_COMMAND && (name === 'stop' || name === 'start')) {
      const userId = interaction.member?.user?.id ?? interaction.user?.id;
      const answer = userId
        ? await botMessagingCommand(runtime, {
            source: 'discord',
            teamId: credential.description.team_id,
            projectId: credential.description.project_id,
            platformUserId: userId,
            command: name,
            eventId: interaction.id ?? null,
          })
        : { found: false };
      return ephemeral(messagingAnswer('discord', name, answer.found));
    }
    return ephemeral('This interaction is not supported.');
  } catch (error) {
    logger.error('discord interaction not answered', {
      project_id: request.projectId,
      error: error instanceof Error ? error.name : 'unknown',
    });
    return { status: 500, body: { error: 'The interaction could not be answered.' } };
  }
};
