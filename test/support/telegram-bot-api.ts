/**
 * A loopback fake of the Telegram Bot API (DESIGN §6: integrations are tested with their SDKs pointed at
 * loopback fakes): grammy's `Api` talks to it through `apiRoot`. It binds 127.0.0.1 on a free port, records
 * every call (token, method, JSON payload), knows the bots it was told about (`addBot`) and the statuses
 * `getChatMember` answers (`setChatMemberStatus`), answers 401 for any
 * other or revoked token, and can fail the next calls of a method (`failNext`). Unref'd, so it never keeps
 * a test process alive; `stop()` closes it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One recorded Bot API call. */
interface BotApiCall {
  token: string;
  method: string;
  payload: Record<string, unknown>;
}

/** A running fake Bot API. */
export interface FakeBotApi {
  /** The `apiRoot` to give grammy (`http://127.0.0.1:<port>`). */
  url: string;
  /** Every call, in order. */
  calls: BotApiCall[];
  /** The calls of one method, in order. */
  callsOf(method: string): BotApiCall[];
  /** Makes `token` a valid token of bot `id` (`username`). */
  addBot(token: string, bot: { id: number; username: string }): void;
  /** Makes `token` invalid from now on (a revoked token: 401 Unauthorized). */
  revoke(token: string): void;
  /**
   * Sets what `getChatMember` answers for user `userId` in chat `chatId` (default `member`): e.g. `left` for a member
   * who left without the bot seeing it.
   */
  setChatMemberStatus(chatId: string, userId: number, status: 'member' | 'left' | 'kicked'): void;
  /** Answers the next `times` calls of `method` with `error_code` and `description` (e.g. 500, 400). */
  failNext(method: string, failure: { error_code: number; description: string; times?: number }): void;
  stop(): Promise<void>;
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

/** Starts a fake Bot API on 127.0.0.1 (a free port). */
export async function startFakeBotApi(): Promise<FakeBotApi> {
  const bots = new Map<string, { id: number; username: string }>();
  const failures = new Map<string, { error_code: number; description: string; times: number }>();
  const calls: BotApiCall[] = [];
  const memberStatuses = new Map<string, string>();
  let links = 0;
  const server: Server = createServer((request, response) => {
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    readJson(request).then(
      (payload) => {
        const match = /^\/bot([^/]+)\/(\w+)$/.exec(new URL(request.url ?? '/', 'http://fake').pathname);
        if (!match) return answer(404, { ok: false, error_code: 404, description: 'Not Found' });
        const [, token, method] = match;
        calls.push({ token, method, payload });
        const bot = bots.get(token);
        if (!bot) return answer(401, { ok: false, error_code: 401, description: 'Unauthorized' });
        const failure = failures.get(method);
        if (failure && failure.times > 0) {
          failure.times--;
          return answer(failure.error_code, {
            ok: false,
            error_code: failure.error_code,
            description: failure.description,
          });
        }
        switch (method) {
          case 'getMe':
            return answer(200, {
              ok: true,
              result: {
                id: bot.id,
                is_bot: true,
                first_name: 'Club bot',
                username: bot.username,
                can_join_groups: true,
                can_read_all_group_messages: false,
                supports_inline_queries: false,
              },
            });
          case 'createChatInviteLink':
            links++;
            return answer(200, {
              ok: true,
              result: {
                invite_link: `https://t.me/+fakeInvite${String(links).padStart(4, '0')}`,
                creator: { id: bot.id, is_bot: true, first_name: 'Club bot' },
                creates_join_request: false,
                is_primary: false,
                is_revoked: false,
                ...(payload.name ? { name: payload.name } : {}),
                ...(payload.expire_date ? { expire_date: payload.expire_date } : {}),
                ...(payload.member_limit ? { member_limit: payload.member_limit } : {}),
              },
            });
          case 'revokeChatInviteLink':
            return answer(200, {
              ok: true,
              result: {
                invite_link: payload.invite_link,
                creator: { id: bot.id, is_bot: true, first_name: 'Club bot' },
                creates_join_request: false,
                is_primary: false,
                is_revoked: true,
              },
            });
          case 'sendMessage':
            return answer(200, {
              ok: true,
              result: {
                message_id: calls.length,
                date: Math.floor(Date.now() / 1000),
                chat: { id: payload.chat_id, type: 'private' },
                from: { id: bot.id, is_bot: true, first_name: 'Club bot' },
                text: payload.text,
              },
            });
          case 'getChatMember':
            return answer(200, {
              ok: true,
              result: {
                status: memberStatuses.get(`${String(payload.chat_id)}:${String(payload.user_id)}`) ?? 'member',
                user: { id: payload.user_id, is_bot: false, first_name: `User ${String(payload.user_id)}` },
              },
            });
          case 'setWebhook':
          case 'deleteWebhook':
          case 'banChatMember':
          case 'unbanChatMember':
            return answer(200, { ok: true, result: true });
          default:
            return answer(404, { ok: false, error_code: 404, description: `Not Found: method ${method}` });
        }
      },
      () => answer(400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    callsOf: (method) => calls.filter((call) => call.method === method),
    addBot: (token, bot) => void bots.set(token, bot),
    revoke: (token) => void bots.delete(token),
    setChatMemberStatus: (chatId, userId, status) => void memberStatuses.set(`${chatId}:${userId}`, status),
    failNext: (method, failure) => void failures.set(method, { ...failure, times: failure.times ?? 1 }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
