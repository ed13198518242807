import { z } from 'zod';

/** ISO 8601 UTC timestamp with `Z` (DESIGN D12). */
export const Timestamp = z.iso.datetime().describe('ISO 8601 UTC timestamp, e.g. 2026-05-01T12:00:00.000Z');

/** UUID path/body identifier of a domain object (DESIGN D12). */
export const Uuid = z.uuid();

/** `?limit=` (1–100, default 25) and `?cursor=` (opaque) of every list (DESIGN D12). */
export const ListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(25).describe('Page size, 1–100 (default 25).'),
    cursor: z.string().min(1).max(2048).optional().describe('Opaque cursor from `next_cursor` of the previous page.'),
  })
  .strict();

/**
 * A page of a list: `{ data: T[], next_cursor: string | null }` (DESIGN D12).
 * @param item the zod schema of one element
 */
export function listOf<T extends z.ZodType>(item: T, id: string) {
  return z
    .object({
      data: z.array(item),
      next_cursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
    })
    .meta({ id });
}

/** The RFC 9457 problem document every failure returns (DESIGN D1). */
export const Problem = z
  .object({
    type: z.string().describe('The docs_url of the error code.'),
    title: z.string().describe('Default message of the error code.'),
    status: z.number().int(),
    detail: z.string(),
    code: z.string().describe('Error code from service://enums/error-code.'),
    hint: z.string().describe('How to fix it.'),
    docs_url: z.string(),
    request_id: z.string(),
    errors: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Field-level validation errors (VALIDATION_FAILED only).'),
  })
  .meta({ id: 'Problem' });

/** Empty JSON body for operations that take none. */
export const EmptyBody = z.object({}).strict();
