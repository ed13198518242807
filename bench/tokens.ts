/**
 * Tokens for the bench's calls: how many keep a run under the per-token rate limits, and minting them.
 *
 * @module
 */
import { mintToken } from '../shared/domain/tokens/repository.js';
import { ABILITY_VALUES } from '../shared/catalogues/abilities.js';
import { systemClock } from '../shared/clock.js';
import type { Store } from '../shared/store/store.js';

/**
 * How many tokens keep `calls` requests under a per-token limit of `limitPerMinute`, with a 20 %
 * margin (fixed one-minute windows: a run may straddle two, which only helps).
 */
export function tokensNeeded(calls: number, limitPerMinute: number): number {
  return Math.max(1, Math.ceil(calls / Math.floor(limitPerMinute * 0.8)));
}

/** Mints `count` tokens of `teamId`, each holding every ability; returns the bearer strings and ids. */
export async function mintTokens(
  store: Store,
  teamId: string,
  count: number,
  name: string,
): Promise<Array<{ id: string; token: string }>> {
  const tokens: Array<{ id: string; token: string }> = [];
  for (let index = 0; index < count; index++) {
    const minted = await mintToken(store, systemClock, {
      teamId,
      abilities: ABILITY_VALUES,
      name: `${name} ${index + 1}`,
    });
    tokens.push({ id: minted.id, token: minted.token });
  }
  return tokens;
}
