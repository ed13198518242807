/**
 * Error-code catalogue: every code the service can return, and only those (interface "Errors"; D1, D3, D5, D20:
 * BILLING_LOCKED and TIER_LIMIT_REACHED are 402). Served as `service://enums/error-code`.
 */

/** The base of every `docs_url`; the anchor is the code in lower-kebab case. */
const ERROR_DOCS_BASE_URL = 'https://docs.membership.example/errors' as const;

/** The kind of failure a code reports. */
export type ErrorCategory =
  'authentication' | 'authorization' | 'rate_limit' | 'request' | 'idempotency' | 'state' | 'billing' | 'server';

/** `TOKEN_MISSING_ABILITY` → `token-missing-ability`. */
function kebab(code: string): string {
  return code.toLowerCase().replaceAll('_', '-');
}

function entry<const C extends string, const S extends number>(
  code: C,
  status: S,
  category: ErrorCategory,
  title: string,
  hint: string,
) {
  return { code, status, category, title, hint, docs_url: `${ERROR_DOCS_BASE_URL}#${kebab(code)}` } as const;
}

/**
 * Every error code: `{ code, status, category, title (default message), hint (remediation), docs_url }`.
 * `title` is the problem-details `title`, `docs_url` is its `type` (DESIGN D1).
 */
export const ERROR_CODES = [
  entry(
    'AUTHENTICATION_REQUIRED',
    401,
    'authentication',
    'Authentication required.',
    'Send `Authorization: Bearer svc_live_<id>_<secret>` with a token that exists and is not revoked; mint a new token in Settings, API Tokens if needed.',
  ),
  entry(
    'TOKEN_MISSING_ABILITY',
    403,
    'authorization',
    'The token lacks the ability this operation requires.',
    'Use a token that carries the ability named in `detail` (the tool server also needs `mcp:full`); abilities are fixed when a token is minted. A token narrowed to projects (`scope:project:<uuid>`) cannot use team-wide operations (tokens, activity, webhooks).',
  ),
  entry(
    'RATE_LIMITED',
    429,
    'rate_limit',
    'Too many requests.',
    'Wait the number of seconds in the `Retry-After` header before retrying; spread requests out or use fewer parallel calls.',
  ),
  entry(
    'VALIDATION_FAILED',
    422,
    'request',
    'The request is invalid.',
    'Fix the fields listed in `errors` (each has a `path` and a `message`) and send the request again.',
  ),
  entry(
    'NOT_FOUND',
    404,
    'request',
    'The requested object or path does not exist.',
    'Check the id and the path; objects of other teams, and projects outside the token\u2019s project scope, are reported as not found.',
  ),
  entry(
    'METHOD_NOT_ALLOWED',
    405,
    'request',
    'The HTTP method is not allowed on this path.',
    'Use one of the methods listed in the `Allow` header.',
  ),
  entry(
    'UNSUPPORTED_MEDIA_TYPE',
    415,
    'request',
    'The request body has an unsupported content type.',
    'Send the body as JSON with `Content-Type: application/json`.',
  ),
  entry(
    'PAYLOAD_TOO_LARGE',
    413,
    'request',
    'The request body is too large.',
    'Send a smaller body; split large batches into several requests.',
  ),
  entry(
    'IDEMPOTENCY_KEY_REUSED',
    422,
    'idempotency',
    'The idempotency key was already used for a different request.',
    'Generate a new UUID for each distinct write; reuse a key only to retry the exact same method, path and body.',
  ),
  entry(
    'IDEMPOTENCY_KEY_IN_USE',
    409,
    'idempotency',
    'A request with this idempotency key is still being processed.',
    'Wait for the first request to finish, then retry with the same key to receive its response.',
  ),
  entry(
    'CONFLICT',
    409,
    'state',
    'The object\u2019s current state does not allow this operation.',
    'Read the object again and check its state (for example, only a dead delivery can be retried) before retrying.',
  ),
  entry(
    'BILLING_LOCKED',
    402,
    'billing',
    'The team is locked for non-payment.',
    'An invoice of the team\u2019s own tier is unpaid past its 7-day grace period, so creator writes are refused until it is paid (reads, billing and the subscriber side keep working). See `GET /v1/billing` and `GET /v1/billing/invoices?status=open`, then pay the open invoices.',
  ),
  entry(
    'TIER_LIMIT_REACHED',
    402,
    'billing',
    'The team\u2019s tier does not allow more of these objects.',
    'The team reached a limit of its tier (`GET /v1/billing` shows limits and usage). Delete an object of that kind, or move to a higher tier with `POST /v1/billing/tier`, then retry.',
  ),
  entry(
    'CSRF_TOKEN_INVALID',
    403,
    'authentication',
    'The form is missing its CSRF token or the token does not match the session.',
    'Reload the dashboard page and submit the form again; dashboard forms and htmx requests carry the session\u2019s CSRF token (DESIGN D21).',
  ),
  entry(
    'PROVIDER_UNAVAILABLE',
    502,
    'server',
    'A payment provider or platform the operation needs could not be reached or failed.',
    'Nothing was changed; retry later with the same idempotency key. `detail` names the provider call that failed.',
  ),
  entry(
    'INTERNAL_ERROR',
    500,
    'server',
    'An unexpected error occurred.',
    'Retry with the same idempotency key; if it persists, contact support with the `request_id`.',
  ),
] as const;

/** One entry of {@link ERROR_CODES}. */
export type ErrorCodeDefinition = (typeof ERROR_CODES)[number];

/** Union of every error code, e.g. `'TOKEN_MISSING_ABILITY'`. */
export type ErrorCode = ErrorCodeDefinition['code'];

/** Every error code string, in catalogue order (a tuple usable with `z.enum`). */
export const ERROR_CODE_VALUES = ERROR_CODES.map((error) => error.code) as unknown as readonly [
  ErrorCode,
  ...ErrorCode[],
];

/** The catalogue entry of a code (status, title, hint, docs_url). */
export function errorCode<C extends ErrorCode>(code: C): Extract<ErrorCodeDefinition, { code: C }> {
  const found = ERROR_CODES.find((error) => error.code === code);
  if (!found) throw new Error(`Unknown error code: ${code}`);
  return found as Extract<ErrorCodeDefinition, { code: C }>;
}
