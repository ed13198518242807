import { defineModule, defineOperation } from '../../operations/definition.js';
import { tokensInternalOperations } from './internal-operations.js';
import {
  CreateTokenRequest,
  RevokeTokenQuery,
  ListTokensQuery,
  Token,
  TokenIdParams,
  TokenList,
  TokenWithSecret,
} from './schema.js';

/** The token operations (DESIGN D2, D13). */
export const tokensModule = defineModule({
  folder: 'tokens',
  operations: {
    createToken: defineOperation({
      id: 'createToken',
      summary: 'Mint a token within the caller’s own abilities and scopes; the secret is shown once.',
      tag: 'Tokens',
      ability: 'token:create',
      // Open to project-scoped tokens: they mint only within their own abilities and projects (`mintToken`).
      teamWide: false,
      body: CreateTokenRequest,
      output: TokenWithSecret,
      events: [],
      rest: { method: 'POST', path: '/v1/tokens', successStatus: 201 },
    }),
    listTokens: defineOperation({
      id: 'listTokens',
      summary: 'List the team’s API tokens with their abilities and scopes (never their secrets).',
      tag: 'Tokens',
      ability: 'token:view-any',
      teamWide: true,
      query: ListTokensQuery,
      output: TokenList,
      events: [],
      rest: { method: 'GET', path: '/v1/tokens', successStatus: 200 },
      tool: { name: 'list_tokens', title: 'List tokens', kind: 'read' },
    }),
    revokeToken: defineOperation({
      id: 'revokeToken',
      summary: 'Revoke a token; effective on its next call.',
      tag: 'Tokens',
      ability: 'token:revoke',
      teamWide: true,
      params: TokenIdParams,
      query: RevokeTokenQuery,
      output: Token,
      events: [],
      rest: { method: 'DELETE', path: '/v1/tokens/{id}', successStatus: 200 },
    }),
  },
  internal: tokensInternalOperations,
});
