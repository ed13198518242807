import type { PlatformType } from '../catalogues/platform-types.js';
import { integrationsOf, type IntegrationSettings } from '../integrations.js';
import type { Store } from '../store/store.js';
import { logger } from '../logger.js';
import type { PlatformAdapter, PlatformAdapters, PlatformGrantResult, PlatformResult } from './platform-adapter.js';
import { discordPlatformAdapter } from './discord.js';
import { telegramPlatformAdapter } from './telegram.js';
import { webPlatformAdapter } from './web.js';

/**
 * What the service's platform adapters need of a runtime: the store and its integration settings (if it carries any).
 */
export interface PlatformRuntime {
  store: Store;
  clock: { nowMs(): number };
  integrations?: IntegrationSettings;
}

/**
 * The platform adapters the service runs with (DESIGN D22, D28), by platform type: `web`, `telegram` (grammy) and
 * `discord` (`@discordjs/rest`), with the runtime's store and integration settings, read when a call is made. Use cases
 * take an adapter map as an option so tests can pass failing adapters; without one they use these.
 */
export function platformAdapters(runtime: PlatformRuntime): PlatformAdapters {
  return {
    web: webPlatformAdapter('web'),
    telegram: telegramPlatformAdapter({
      store: runtime.store,
      settings: () => integrationsOf(runtime),
      nowMs: () => runtime.clock.nowMs(),
    }),
    discord: discordPlatformAdapter({
      store: runtime.store,
      settings: () => integrationsOf(runtime),
      nowMs: () => runtime.clock.nowMs(),
    }),
  };
}

/**
 * The adapter for a project's `platform_type` from `adapters`. Platforms without an adapter yet (slack, whatsapp,
 * circle, discourse, youtube) get the `web` behaviour — every action succeeds without calling anything — until their
 * adapters exist.
 */
export function platformAdapterFor(platformType: PlatformType, adapters: PlatformAdapters): PlatformAdapter {
  return adapters[platformType] ?? webPlatformAdapter(platformType);
}

/**
 * Runs one platform call (DESIGN D22) and never throws: an exception becomes a failure with a generic
 * reason (its message may carry platform internals; only its name is logged).
 */
export async function callPlatform<T extends PlatformResult | PlatformGrantResult>(
  run: () => Promise<T>,
): Promise<T | { ok: false; reason: string }> {
  try {
    return await run();
  } catch (error) {
    logger.warn('platform call failed unexpectedly', { error: error instanceof Error ? error.name : 'unknown' });
    return { ok: false, reason: 'The platform call failed unexpectedly; retry later.' };
  }
}
