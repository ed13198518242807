import type { Principal } from '../auth/principal.js';
import { isAbility } from '../catalogues/abilities.js';
import { toolDefinition } from '../catalogues/tools.js';
import { ProblemError } from '../errors.js';
import { operationById } from '../operations/registry.js';
import { protectedResourceMetadataUrl } from './resource-metadata.js';

/**
 * The tool server's scope challenge (RFC 6750 §3.1, MCP "Authorization" scope challenges; DESIGN D30 amended): a call
 * of a token issued through OAuth that is refused for an ability the token lacks answers 403 with
 * `WWW-Authenticate: Bearer error="insufficient_scope", scope="mcp:full <ability>"` (the scopes the call needs, the
 * gate's included, so a client that asks for exactly these can pass consent), and authorizing again adds the ability
 * to the client's grant (`liveGrantOf`).
 * The body stays the one the interface gives (the TOKEN_MISSING_ABILITY problem, or the tool's `isError` result).
 * Static tokens cannot be re-authorized and keep their answers unchanged.
 */

/** The challenge naming `ability` (and the gate), with the tool server's protected resource metadata URL. */
function challenge(ability: string, requestUrl: string): string {
  const scope = ability === 'mcp:full' ? ability : `mcp:full ${ability}`;
  return `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${protectedResourceMetadataUrl(requestUrl)}"`;
}

/**
 * The `mcp:full` gate's refusal `error` with the challenge added when `principal` is an OAuth token lacking the
 * ability; any other error unchanged.
 */
export function withGateChallenge(error: unknown, principal: Principal, request: Request): unknown {
  if (!(error instanceof ProblemError) || error.code !== 'TOKEN_MISSING_ABILITY' || !principal.oauthGrantId)
    return error;
  if (principal.abilities.has('mcp:full')) return error;
  return new ProblemError(error.code, error.detail, {
    errors: error.errors,
    headers: { ...error.headers, 'WWW-Authenticate': challenge('mcp:full', request.url) },
  });
}

/**
 * The answer to a single `tools/call` (`message`) as 403 with the challenge when `principal` is an OAuth token and the
 * call was refused TOKEN_MISSING_ABILITY for the tool's ability, which it lacks (a project-scope or read-only refusal
 * is not a missing scope); else `response` unchanged.
 */
export async function withToolScopeChallenge(
  response: Response,
  principal: Principal,
  message: { method?: unknown; params?: unknown },
  request: Request,
): Promise<Response> {
  if (!principal.oauthGrantId || message.method !== 'tools/call' || response.status !== 200) return response;
  const name = (message.params as { name?: unknown } | undefined)?.name;
  const tool = typeof name === 'string' ? toolDefinition(name) : undefined;
  const ability = tool ? operationById(tool.operationId).ability : null;
  if (!ability || !isAbility(ability) || principal.abilities.has(ability)) return response;
  const text = await response.text();
  const answer = JSON.parse(text) as { result?: { isError?: boolean; structuredContent?: { code?: unknown } } };
  const refused = answer.result?.isError && answer.result.structuredContent?.code === 'TOKEN_MISSING_ABILITY';
  const headers = new Headers(response.headers);
  if (refused) headers.set('WWW-Authenticate', challenge(ability, request.url));
  return new Response(text, { status: refused ? 403 : response.status, headers });
}
