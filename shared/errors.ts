import { errorCode, type ErrorCode } from './catalogues/error-codes.js';

/** One field-level validation error (`errors[]` of a VALIDATION_FAILED problem). */
export interface FieldError {
  /** Dotted path into the request, e.g. `body.events.0`, `query.limit`, `header.idempotency-key`. */
  path: string;
  message: string;
}

/**
 * The one error type of the domain: carries an error code of the catalogue
 * (`service://enums/error-code`, DESIGN D1) and becomes a problem document at every edge
 * (REST response, MCP tool result, CLI stderr).
 */
export class ProblemError extends Error {
  readonly code: ErrorCode;
  readonly detail: string;
  readonly errors?: FieldError[];
  /** Extra response headers (e.g. `Retry-After` in seconds, `WWW-Authenticate`, `Allow`). */
  readonly headers: Record<string, string>;

  constructor(
    code: ErrorCode,
    detail: string,
    options: { errors?: FieldError[]; headers?: Record<string, string> } = {},
  ) {
    super(`${code}: ${detail}`);
    this.name = 'ProblemError';
    this.code = code;
    this.detail = detail;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  /** HTTP status of the code (from the catalogue). */
  get status(): number {
    return errorCode(this.code).status;
  }
}

/** An RFC 9457 problem document with the service's extension members (DESIGN D1). */
export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ErrorCode;
  hint: string;
  docs_url: string;
  request_id: string;
  errors?: FieldError[];
}

/**
 * What a failed operation's outcome throws where its caller throws rather than renders (the operator CLI, the inbound
 * hooks): the unexpected error behind an INTERNAL_ERROR when there is one, else the problem as a ProblemError (field
 * errors kept).
 */
export function failureOf(failed: { problem: ProblemDocument; cause?: unknown }): Error {
  if (failed.cause instanceof Error) return failed.cause;
  return new ProblemError(failed.problem.code, failed.problem.detail, { errors: failed.problem.errors });
}

/**
 * Turns any thrown value into a problem document. A {@link ProblemError} keeps its code; anything
 * else becomes INTERNAL_ERROR with a generic detail (the original message is never exposed, since it
 * may carry secrets or internals — log it instead).
 */
export function toProblem(
  error: unknown,
  requestId: string,
): { problem: ProblemDocument; headers: Record<string, string> } {
  const known =
    error instanceof ProblemError
      ? error
      : new ProblemError(
          'INTERNAL_ERROR',
          'An unexpected error occurred. Retry later; quote the request_id if it persists.',
        );
  const entry = errorCode(known.code);
  const problem: ProblemDocument = {
    type: entry.docs_url,
    title: entry.title,
    status: entry.status,
    detail: known.detail,
    code: known.code,
    hint: entry.hint,
    docs_url: entry.docs_url,
    request_id: requestId,
  };
  if (known.errors) problem.errors = known.errors;
  return { problem, headers: known.headers };
}

/** Converts zod issues to field errors under a prefix (`body`, `query`, `path`, `arguments`). */
export function fieldErrors(
  prefix: string,
  issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>,
): FieldError[] {
  return issues.map((issue) => ({
    path: [prefix, ...issue.path.map(String)].filter(Boolean).join('.'),
    message: issue.message,
  }));
}

/**
 * A rejected client cursor (D12) — refused by `decodeCursor` or a store `ValidationException` — as VALIDATION_FAILED at
 * `path` (`query.cursor`, `arguments.cursor`). Call only for requests that carried a cursor. Returns null for any other
 * error.
 */
export function cursorRejection(error: unknown, path: string): ProblemError | null {
  const rejectedByStore =
    error instanceof Error && !(error instanceof ProblemError) && error.name === 'ValidationException';
  const rejectedByDecoder =
    error instanceof ProblemError &&
    error.code === 'VALIDATION_FAILED' &&
    error.errors?.length === 1 &&
    error.errors[0].path === 'cursor';
  if (rejectedByStore || rejectedByDecoder) {
    return new ProblemError('VALIDATION_FAILED', 'The cursor is not valid for this list.', {
      errors: [{ path, message: 'Use the next_cursor of the previous page of this same list.' }],
    });
  }
  return null;
}
