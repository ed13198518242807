import { defineFacts } from '../define-facts.js';

/**
 * The partition-key prefix of token items (`keys.token`); read routes may update only their `last_used_at`
 * (lib/route-stack.ts).
 */
export const TOKEN_PARTITION_PREFIX = 'TOKEN#';

/**
 * Tokens' abilities and keys (DESIGN D2, D14): a token is found by its id alone (`TOKEN#<id>`); a team's tokens through
 * the sparse GSI.
 */
export const tokensFacts = defineFacts({
  abilities: {
    category: 'token',
    label: 'API tokens',
    entries: [
      {
        value: 'token:view-any',
        description: 'List the API tokens of the team (never their secrets).',
        roles: ['developer', 'analyst', 'viewer'],
      },
      {
        value: 'token:create',
        description: 'Mint an API token (never with abilities or scopes the caller lacks).',
        roles: ['developer'],
      },
      { value: 'token:revoke', description: 'Revoke an API token; it fails on its next call.', roles: ['developer'] },
    ],
  },
  keys: {
    token: (tokenId: string) => ({ pk: `${TOKEN_PARTITION_PREFIX}${tokenId}`, sk: 'TOKEN' }),
    teamTokensIndex: (teamId: string) => `TEAM#${teamId}#TOKENS`,
  },
  entity: { token: 'token' },
});
