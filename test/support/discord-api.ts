/**
 * A loopback fake of the Discord API and its OAuth2 token endpoint (DESIGN §6, D28): `@discordjs/rest` talks to it
 * through `DISCORD_API_BASE_URL` (`<url>` = `http://127.0.0.1:<port>/api`; REST calls under `/api/v10`, the token
 * endpoint at `/api/oauth2/token`). It records every call (method, route with ids, authorization, body), knows the
 * bots, guilds, roles, members, bans, application commands and OAuth2 codes it was told about (the members list pages
 * by `limit` and `after` in user id order; a code's exchange and each refresh issue fresh tokens; a refresh token works
 * once, and an access token stops working once refreshed; `expires_in` {@link TOKEN_LIFETIME_SECONDS}), answers 401 for
 * an unknown token, and can fail the next calls of a route (`failNext`) or rate-limit them (`rateLimitNext`, 429 with
 * `retry_after`). Unref'd, so it never keeps a test process alive; `stop()` closes it.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** How long the fake's access tokens last, in seconds (Discord's: 7 days). */
export const TOKEN_LIFETIME_SECONDS = 604800;

/** One recorded call: `route` is the path after the API version with ids, e.g. `PUT /guilds/1/members/2/roles/3`. */
interface DiscordApiCall {
  route: string;
  authorization: string | null;
  body: unknown;
}

/** A guild of the fake: its roles, its members (user id → role ids) and its bans. */
interface FakeGuild {
  roles: Set<string>;
  members: Map<string, Set<string>>;
  bans: Set<string>;
}

/** A running fake Discord API. */
export interface FakeDiscordApi {
  /** The `DISCORD_API_BASE_URL` to give the service. */
  url: string;
  calls: DiscordApiCall[];
  /** The calls whose route starts with `prefix` (e.g. `PUT /guilds/`). */
  callsOf(prefix: string): DiscordApiCall[];
  /** Makes `token` a valid bot token of bot user `id`. */
  addBot(token: string, bot: { id: string; username: string }): void;
  /** Adds a guild with `roles` (role ids). */
  addGuild(guildId: string, roles: string[]): void;
  guild(guildId: string): FakeGuild;
  /**
   * Makes `code` an authorization code of user `user`, for client `clientId` and `redirectUri`; its exchange yields
   * `accessToken`.
   */
  addCode(
    code: string,
    grant: { clientId: string; redirectUri: string; user: { id: string; username: string }; accessToken: string },
  ): void;
  /** The application's registered global commands (by application id; what `PUT /applications/{id}/commands` set). */
  commands(applicationId: string): { id: string; name: string }[];
  /** The access token a user holds now (the last issued to them), or undefined. */
  accessTokenOf(userId: string): string | undefined;
  /** Makes every refresh token of `userId` stop working (the user revoked the app). */
  revokeRefreshTokens(userId: string): void;
  /** Answers the next `times` calls whose route starts with `prefix` with `status` and Discord's error body. */
  failNext(prefix: string, failure: { status: number; message: string; code?: number; times?: number }): void;
  /** Answers the next call whose route starts with `prefix` with 429 and `retry_after` seconds. */
  rateLimitNext(prefix: string, retryAfterSeconds: number): void;
  stop(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Starts a fake Discord API on 127.0.0.1 (a free port). */
export async function startFakeDiscordApi(): Promise<FakeDiscordApi> {
  const bots = new Map<string, { id: string; username: string }>();
  const users = new Map<string, { id: string; username: string }>();
  const guilds = new Map<string, FakeGuild>();
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; user: { id: string; username: string }; accessToken: string }
  >();
  const refreshTokens = new Map<
    string,
    { clientId: string; user: { id: string; username: string }; accessToken: string }
  >();
  const commands = new Map<string, { id: string; name: string }[]>();
  let issued = 0;
  /** Issues `accessToken` and a fresh refresh token to `user` for `clientId`: the token endpoint's answer. */
  const issue = (clientId: string, user: { id: string; username: string }, accessToken: string) => {
    users.set(accessToken, user);
    const refreshToken = `refresh-${++issued}-${accessToken}`;
    refreshTokens.set(refreshToken, { clientId, user, accessToken });
    return {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: TOKEN_LIFETIME_SECONDS,
      refresh_token: refreshToken,
      scope: 'identify guilds.join',
    };
  };
  const failures: { prefix: string; status: number; message: string; code: number; times: number }[] = [];
  const rateLimits: { prefix: string; retryAfter: number }[] = [];
  const calls: DiscordApiCall[] = [];

  const server: Server = createServer((request, response) => {
    const answer = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      if (body === undefined) {
        response.writeHead(status, headers);
        response.end();
        return;
      }
      response.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      response.end(JSON.stringify(body));
    };
    const refuse = (status: number, message: string, code = 0) => answer(status, { message, code });
    void readBody(request).then((text) => {
      const path = new URL(request.url ?? '/', 'http://fake').pathname;
      const method = (request.method ?? 'GET').toUpperCase();
      const authorization = request.headers.authorization ?? null;
      const isForm = (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
      const body =
        text === '' ? null : isForm ? Object.fromEntries(new URLSearchParams(text)) : (JSON.parse(text) as unknown);
      const route = `${method} ${path.replace(/^\/api(\/v\d+)?/, '')}`;
      calls.push({ route, authorization, body });

      const limit = rateLimits.findIndex((entry) => route.startsWith(entry.prefix));
      if (limit >= 0) {
        const [{ retryAfter }] = rateLimits.splice(limit, 1);
        return answer(
          429,
          { message: 'You are being rate limited.', retry_after: retryAfter, global: false },
          { 'Retry-After': String(retryAfter) },
        );
      }
      const failure = failures.find((entry) => entry.times > 0 && route.startsWith(entry.prefix));
      if (failure) {
        failure.times--;
        return refuse(failure.status, failure.message, failure.code);
      }

      if (route === 'POST /oauth2/token' && (body as Record<string, string>).grant_type === 'refresh_token') {
        const form = body as Record<string, string>;
        const grant = refreshTokens.get(form.refresh_token);
        if (!grant || form.client_id !== grant.clientId || !form.client_secret)
          return answer(400, { error: 'invalid_grant', error_description: 'Invalid "refresh_token" in request.' });
        refreshTokens.delete(form.refresh_token);
        users.delete(grant.accessToken);
        return answer(
          200,
          issue(grant.clientId, grant.user, `${grant.accessToken.replace(/~\d+$/, '')}~${issued + 1}`),
        );
      }
      if (route === 'POST /oauth2/token') {
        const form = body as Record<string, string>;
        const grant = codes.get(form.code);
        if (
          !grant ||
          form.grant_type !== 'authorization_code' ||
          form.client_id !== grant.clientId ||
          form.redirect_uri !== grant.redirectUri ||
          !form.client_secret
        ) {
          return answer(400, { error: 'invalid_grant', error_description: 'Invalid "code" in request.' });
        }
        codes.delete(form.code);
        return answer(200, issue(grant.clientId, grant.user, grant.accessToken));
      }

      const bot = authorization?.startsWith('Bot ') ? bots.get(authorization.slice(4)) : undefined;
      const user = authorization?.startsWith('Bearer ') ? users.get(authorization.slice(7)) : undefined;
      if (!bot && !user) return refuse(401, '401: Unauthorized');
      if (route === 'GET /users/@me')
        return answer(200, {
          ...(bot ?? user)!,
          discriminator: '0',
          global_name: null,
          avatar: null,
          ...(bot ? { bot: true } : {}),
        });
      if (!bot) return refuse(403, 'Missing Access', 50001);

      let match: RegExpExecArray | null;
      if ((match = /^PUT \/applications\/(\d+)\/commands$/.exec(route))) {
        const registered = (body as { name: string }[]).map((command, index) => ({
          id: String(9000 + index),
          application_id: match![1],
          ...command,
        }));
        commands.set(match[1], registered);
        return answer(200, registered);
      }
      if ((match = /^GET \/applications\/(\d+)\/commands$/.exec(route)))
        return answer(200, commands.get(match[1]) ?? []);
      if ((match = /^DELETE \/applications\/(\d+)\/commands\/(\d+)$/.exec(route))) {
        const registered = commands.get(match[1]) ?? [];
        const id = match[2];
        if (!registered.some((command) => command.id === id)) return refuse(404, 'Unknown application command', 10063);
        commands.set(
          match[1],
          registered.filter((command) => command.id !== id),
        );
        return answer(204);
      }
      if (route === 'POST /users/@me/channels') {
        const recipient = (body as { recipient_id: string }).recipient_id;
        return answer(200, { id: `9${recipient.slice(1)}`, type: 1, recipients: [{ id: recipient }] });
      }
      if ((match = /^POST \/channels\/(\d+)\/messages$/.exec(route)))
        return answer(200, {
          id: String(calls.length),
          channel_id: match[1],
          content: (body as { content: string }).content,
        });
      const known = (guildId: string) => guilds.get(guildId);
      if ((match = /^GET \/guilds\/(\d+)$/.exec(route))) {
        return known(match[1])
          ? answer(200, { id: match[1], name: 'Guild', roles: [] })
          : refuse(404, 'Unknown Guild', 10004);
      }
      if ((match = /^GET \/guilds\/(\d+)\/roles$/.exec(route))) {
        const guild = known(match[1]);
        return guild
          ? answer(
              200,
              // Discord lists @everyone too: its id is the guild's.
              [{ id: match[1], name: '@everyone' }, ...[...guild.roles].map((id) => ({ id, name: `role ${id}` }))],
            )
          : refuse(404, 'Unknown Guild', 10004);
      }
      if ((match = /^(PUT|DELETE) \/guilds\/(\d+)\/members\/(\d+)\/roles\/(\d+)$/.exec(route))) {
        const guild = known(match[2]);
        if (!guild) return refuse(404, 'Unknown Guild', 10004);
        if (!guild.roles.has(match[4])) return refuse(404, 'Unknown Role', 10011);
        const roles = guild.members.get(match[3]);
        if (!roles) return refuse(404, 'Unknown Member', 10007);
        if (match[1] === 'PUT') roles.add(match[4]);
        else roles.delete(match[4]);
        return answer(204);
      }
      if ((match = /^GET \/guilds\/(\d+)\/members$/.exec(route))) {
        const guild = known(match[1]);
        if (!guild) return refuse(404, 'Unknown Guild', 10004);
        const query = new URL(request.url ?? '/', 'http://fake').searchParams;
        const limit = Math.min(1000, Math.max(1, Number(query.get('limit') ?? 1)));
        const after = BigInt(query.get('after') ?? '0');
        const page = [...guild.members.keys()]
          .filter((id) => BigInt(id) > after)
          .sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1))
          .slice(0, limit);
        return answer(
          200,
          page.map((id) => ({ user: { id, username: `user${id}` }, roles: [...guild.members.get(id)!] })),
        );
      }
      if ((match = /^GET \/guilds\/(\d+)\/members\/(\d+)$/.exec(route))) {
        const roles = known(match[1])?.members.get(match[2]);
        return roles
          ? answer(200, { user: { id: match[2] }, roles: [...roles] })
          : refuse(404, 'Unknown Member', 10007);
      }
      if ((match = /^(PUT|DELETE) \/guilds\/(\d+)\/members\/(\d+)$/.exec(route))) {
        const guild = known(match[2]);
        if (!guild) return refuse(404, 'Unknown Guild', 10004);
        if (match[1] === 'DELETE') {
          guild.members.delete(match[3]);
          return answer(204);
        }
        const { access_token: accessToken, roles = [] } = body as { access_token: string; roles?: string[] };
        if (users.get(accessToken)?.id !== match[3]) return refuse(403, 'Invalid OAuth2 access token', 50025);
        if (guild.bans.has(match[3])) return refuse(403, 'The user is banned from this guild.', 40007);
        if (guild.members.has(match[3])) return answer(204);
        guild.members.set(match[3], new Set(roles));
        return answer(201, { user: { id: match[3] }, roles });
      }
      if ((match = /^(PUT|DELETE) \/guilds\/(\d+)\/bans\/(\d+)$/.exec(route))) {
        const guild = known(match[2]);
        if (!guild) return refuse(404, 'Unknown Guild', 10004);
        if (match[1] === 'PUT') {
          guild.bans.add(match[3]);
          guild.members.delete(match[3]);
        } else if (!guild.bans.delete(match[3])) return refuse(404, 'Unknown Ban', 10026);
        return answer(204);
      }
      return refuse(404, '404: Not Found');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api`,
    calls,
    callsOf: (prefix) => calls.filter((call) => call.route.startsWith(prefix)),
    addBot: (token, bot) => void bots.set(token, bot),
    addGuild: (guildId, roles) =>
      void guilds.set(guildId, { roles: new Set(roles), members: new Map(), bans: new Set() }),
    guild: (guildId) => guilds.get(guildId)!,
    addCode: (code, grant) => void codes.set(code, grant),
    commands: (applicationId) => commands.get(applicationId) ?? [],
    accessTokenOf: (userId) => [...users].filter(([, user]) => user.id === userId).at(-1)?.[0],
    revokeRefreshTokens: (userId) => {
      for (const [token, grant] of refreshTokens) if (grant.user.id === userId) refreshTokens.delete(token);
    },
    failNext: (prefix, failure) =>
      void failures.push({
        prefix,
        status: failure.status,
        message: failure.message,
        code: failure.code ?? 0,
        times: failure.times ?? 1,
      }),
    rateLimitNext: (prefix, retryAfterSeconds) => void rateLimits.push({ prefix, retryAfter: retryAfterSeconds }),
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
