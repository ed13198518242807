import type { PlatformType } from '../catalogues/platform-types.js';
import type { PlatformAdapter, PlatformAdapters } from './platform-adapter.js';
import { webPlatformAdapter } from './web.js';

/**
 * The platform adapters the service runs with (DESIGN D22), by platform type: only `web` today.
 * Use cases take this map as a parameter so tests can pass failing adapters.
 */
export const PLATFORM_ADAPTERS: PlatformAdapters = { web: webPlatformAdapter('web') };

/**
 * The adapter for a project's `platform_type` from `adapters` (default {@link PLATFORM_ADAPTERS}).
 * Platforms without an adapter yet (telegram, discord, slack, whatsapp, circle, discourse, youtube)
 * get the `web` behaviour — every action succeeds without calling anything — until their adapters
 * exist (Telegram comes with the integrations issue).
 */
export function platformAdapterFor(platformType: PlatformType, adapters: PlatformAdapters = PLATFORM_ADAPTERS): PlatformAdapter {
  return adapters[platformType] ?? webPlatformAdapter(platformType);
}
