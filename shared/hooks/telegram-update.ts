import type { PlatformMembershipUpdate } from '../domain/members/platform-updates.js';
import * as z from '../schemas/zod.js';

/**
 * The parts of a Telegram `Update` the Telegram hook reads (DESIGN D22), and what they mean to the service: a
 * membership change, the bot's permissions, a group message's sender.
 */

/** A Telegram user as an update names them. */
const User = z.object({
  id: z.number().check(z.int()),
  is_bot: z.optional(z.boolean()),
  username: z.optional(z.string()),
  first_name: z.optional(z.string()),
  last_name: z.optional(z.string()),
});
const ChatMember = z.looseObject({
  status: z.enum(['creator', 'administrator', 'member', 'restricted', 'left', 'kicked']),
  user: User,
  is_member: z.optional(z.boolean()),
});
const ChatMemberUpdated = z.object({
  chat: z.object({ id: z.number().check(z.int()), type: z.string() }),
  from: User,
  date: z.number().check(z.int()),
  old_chat_member: ChatMember,
  new_chat_member: ChatMember,
  invite_link: z.optional(z.object({ invite_link: z.string() })),
});
/** A message (what the `/account` command reads: a private chat, its sender and text; in a group, its sender). */
const Message = z.looseObject({
  chat: z.looseObject({ id: z.number(), type: z.string() }),
  from: z.optional(User),
  date: z.optional(z.number()),
  text: z.optional(z.string()),
});
/** The part of a Telegram `Update` the hook reads. */
export const TelegramUpdate = z.object({
  update_id: z.number().check(z.int(), z.nonnegative()),
  chat_member: z.optional(ChatMemberUpdated),
  my_chat_member: z.optional(ChatMemberUpdated),
  message: z.optional(Message),
});
type ChatMemberUpdated = z.infer<typeof ChatMemberUpdated>;
type ChatMemberState = z.infer<typeof ChatMember>;
/** A Telegram user as an update names them. */
export type TelegramUser = z.infer<typeof User>;
/** A message as the hook reads it. */
export type TelegramMessage = z.infer<typeof Message>;
/** The update as the hook reads it. */
export type TelegramUpdate = z.infer<typeof TelegramUpdate>;

/** True when a chat member state is inside the chat. */
function isInside(state: ChatMemberState): boolean {
  return (
    state.status === 'creator' ||
    state.status === 'administrator' ||
    state.status === 'member' ||
    (state.status === 'restricted' && state.is_member === true)
  );
}

/** The membership change a `chat_member` update reports, or null when it changes nothing the service tracks. */
export function membershipChange(update: ChatMemberUpdated): PlatformMembershipUpdate['change'] | null {
  const before = update.old_chat_member;
  const after = update.new_chat_member;
  if (after.status === 'kicked') return before.status === 'kicked' ? null : 'banned';
  if (isInside(after)) return isInside(before) ? 'profile' : 'joined';
  if (isInside(before)) return update.from.id === after.user.id ? 'left' : 'kicked';
  return null;
}

/**
 * The permissions a `my_chat_member` update gives the bot: its `can_*` rights that are true, or none when it is not an
 * administrator.
 */
export function botPermissions(state: ChatMemberState): string[] {
  if (state.status !== 'administrator' && state.status !== 'creator') return [];
  return Object.entries(state)
    .filter(([name, value]) => name.startsWith('can_') && value === true)
    .map(([name]) => name);
}

/** A display name from a Telegram user's first and last names. */
export function displayName(user: TelegramUser): string | null {
  const name = [user.first_name, user.last_name].filter(Boolean).join(' ').trim();
  return name === '' ? null : name.slice(0, 200);
}

/**
 * The person who wrote a group message, or null: not a group message, sent by a bot (or an anonymous admin), or the
 * service message of someone leaving (its sender is the one who left, or who removed them).
 */
export function groupSender(message: TelegramMessage | undefined): TelegramUser | null {
  if (!message?.from || message.from.is_bot === true || 'left_chat_member' in message) return null;
  return message.chat.type === 'group' || message.chat.type === 'supergroup' ? message.from : null;
}
