/**
 * API version stamp `YYYY-MM-DD` (interface "Versioning", D11): the `version` of `service://enums/*` envelopes and
 * `/webhook-events.json`, and every webhook envelope's `api_version`.
 */
export const API_VERSION = '2026-05-01' as const;
