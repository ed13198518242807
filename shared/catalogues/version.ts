/**
 * The API version stamp, format `YYYY-MM-DD`.
 *
 * The same value is the `version` field of every `service://enums/*` resource envelope, the
 * `api_version` field of every webhook envelope and the `version` of `GET /webhook-events.json`.
 * Clients compare it to detect schema changes.
 *
 * Source: interface "Versioning"; DESIGN D11.
 */
export const API_VERSION = '2026-05-01' as const;
