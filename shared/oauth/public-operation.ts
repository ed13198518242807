import { tokensInternalHandlers } from '../domain/tokens/internal-handlers.js';
import { anyHandler } from '../operations/handler.js';
import { invokeOperation } from '../operations/invoke.js';
import { inputSchemaOf, pipelineOperationById } from '../operations/registry.js';
import type { Runtime } from '../runtime.js';
import { OAuthError } from './grants.js';
import { oauthError } from './responses.js';

/** Who asks, for the pipeline's activity entry. */
export interface Caller {
  requestId: string;
  clientIp: string;
}

/**
 * Runs internal operation `id` on `input` through `invokeOperation` with no principal (the presented code or token is
 * the credential; its team's activity log gets the entry, refusals included; DESIGN D35). Returns its JSON answer, or
 * the RFC 6749 §5.2 (RFC 7591 §3.2.2) error the handler raised; input its schema refuses is `invalid(detail)`.
 */
export async function runPublicOperation(
  runtime: Runtime,
  id: 'oauthAuthorizationCodeGrant' | 'oauthRefreshTokenGrant' | 'oauthRevokeToken' | 'registerOAuthClient',
  input: Record<string, unknown>,
  caller: Caller,
  invalid: (detail: string) => OAuthError = () =>
    new OAuthError('invalid_request', 'The request’s parameters are too long.'),
): Promise<{ ok: true; result: unknown } | { ok: false; response: Response }> {
  let refused = null as OAuthError | null;
  const handler = anyHandler(tokensInternalHandlers[id] as never);
  const outcome = await invokeOperation({
    runtime,
    principal: null,
    operation: pipelineOperationById(id),
    handler: (args, context) =>
      handler(args, context).catch((error: unknown) => {
        if (error instanceof OAuthError) refused = error;
        throw error;
      }),
    surface: 'rest',
    requestId: caller.requestId,
    clientIp: caller.clientIp,
    decode: () => {
      const parsed = inputSchemaOf(pipelineOperationById(id), { withIdempotencyKey: false }).safeParse(input);
      if (!parsed.success) {
        refused = invalid(parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
        throw refused;
      }
      return { input: parsed.data, idempotencyKey: null, fingerprint: [], cursorField: 'form.cursor' };
    },
  });
  if (outcome.ok) return { ok: true, result: outcome.result };
  return {
    ok: false,
    response: oauthError(refused ?? new OAuthError('invalid_request', outcome.problem.detail, outcome.problem.status)),
  };
}
