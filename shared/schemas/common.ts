import * as z from './zod.js';
import { IdSchemas } from '../ids.js';

/** ISO 8601 UTC timestamp with `Z` (DESIGN D12). */
export const Timestamp = z.iso.datetime().check(z.describe('ISO 8601 UTC timestamp, e.g. 2026-05-01T12:00:00.000Z'));

/** Control characters (Unicode Cc) and unpaired surrogates (Cs): never part of a name or a label. */
const NOT_TEXT = /[\p{Cc}\p{Cs}]/u;
/** The same, but tabs and line breaks are text in a description. */
const NOT_MULTILINE_TEXT = /[^\P{Cc}\t\n\r]|\p{Cs}/u;
/**
 * What a name, description or label with a control character or an unpaired surrogate is refused with
 * (VALIDATION_FAILED names the field).
 */
const TEXT_RULE = 'must be text: no control characters (NUL included) and no unpaired surrogates';

/** A one-line name or label a person reads: trimmed, 1 to `max` characters, {@link TEXT_RULE}. */
export function NameText(max = 100) {
  return z.string().check(
    z.trim(),
    z.minLength(1),
    z.maxLength(max),
    z.refine((value) => !NOT_TEXT.test(value), TEXT_RULE),
  );
}

/** A free text (a description, a reason): up to `max` characters, line breaks and tabs allowed, {@link TEXT_RULE}. */
export function LongText(max = 1000, min = 0) {
  return z.string().check(
    ...(min > 0 ? [z.trim(), z.minLength(min)] : []),
    z.maxLength(max),
    z.refine((value) => !NOT_MULTILINE_TEXT.test(value), TEXT_RULE),
  );
}

/** UUID path/body identifier of a domain object (DESIGN D12). */
export const Uuid = IdSchemas.uuid();

/** ISO 4217 codes known to the runtime's ICU data (Node's full ICU: every active currency), upper case. */
const ISO_4217 = Intl.supportedValuesOf('currency').filter((code) => /^[A-Z]{3}$/.test(code)) as [string, ...string[]];

/**
 * An ISO 4217 currency code, upper case (amounts are integers in its minor unit). An enum rather than a
 * refinement, so `openapi.json` and the tool schemas list exactly the codes the service accepts.
 */
export const Currency = z
  .enum(ISO_4217, { error: 'Not an ISO 4217 currency code.' })
  .check(z.describe('ISO 4217 currency code, upper case (e.g. EUR).'), z.meta({ examples: ['EUR'] }));

/**
 * ISO 4217 minor-unit exponents that are not 2, the one table of them in the service (ISO 4217 "List
 * One", the `MinorUnits` column). ICU's own currency digits (`Intl.NumberFormat`) are display rounding,
 * not the exponent (ICU shows HUF, IDR, PKR with 0 decimals, IQD with 0 instead of 3), so they cannot
 * be used to convert amounts.
 */
const CURRENCY_EXPONENTS: Readonly<Record<string, 0 | 3 | 4>> = {
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
};

/**
 * The number of decimal places of a currency's minor unit, its ISO 4217 exponent: 2 (EUR, USD, HUF,
 * most currencies), 0 (JPY, KRW), 3 (KWD) or 4 (CLF), from {@link CURRENCY_EXPONENTS}. Amounts of the
 * service are integers in this minor unit.
 */
export function currencyExponent(currency: string): number {
  return CURRENCY_EXPONENTS[currency.toUpperCase()] ?? 2;
}

/**
 * An amount in a currency's MAJOR unit as typed by a person (`"9"`, `"9.5"`, `"1234.56"`; a comma is read
 * as the decimal point) converted exactly to integer MINOR units by {@link currencyExponent}: `"9.99"` USD
 * → 999, `"500"` JPY → 500, `"1.5"` KWD → 1500. No floating point is involved. Returns null for text that
 * is not a non-negative amount with at most the currency's number of decimals (e.g. `"0.5"` JPY).
 */
export function toMinorUnits(major: string, currency: string): number | null {
  const exponent = currencyExponent(currency);
  const match = /^(\d{1,12})(?:[.,](\d+))?$/.exec(major.trim());
  if (!match || (match[2] ?? '').length > exponent) return null;
  return Number(match[1]) * 10 ** exponent + Number((match[2] ?? '').padEnd(exponent, '0') || '0');
}

/**
 * An amount in integer MINOR units as a decimal number in the major unit: 999 USD → `9.99`, 500 JPY → `500`, 5 EUR →
 * `0.05`.
 */
export function minorToMajor(amount: number, currency: string): string {
  const exponent = currencyExponent(currency);
  const sign = amount < 0 ? '-' : '';
  const digits = String(Math.abs(amount)).padStart(exponent + 1, '0');
  return `${sign}${exponent ? `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}` : digits}`;
}

/**
 * An amount in integer MINOR units written in the major unit with the currency code: 999 USD → `9.99 USD`, 500 JPY →
 * `500 JPY`.
 */
export function formatMinorUnits(amount: number, currency: string): string {
  return `${minorToMajor(amount, currency)} ${currency.toUpperCase()}`;
}

/**
 * An amount in a currency's minor unit shown in its main unit for people (`€9.00`, `¥500`), with the currency's symbol.
 */
export function formatPrice(amount: number, currency: string, locale = 'en'): string {
  const digits = currencyExponent(currency);
  return new Intl.NumberFormat(locale, {
    style: 'currency',
    currency: currency.toUpperCase(),
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(amount / 10 ** digits);
}

/** Page size of every list when `limit` is not given (DESIGN D12). */
const DEFAULT_PAGE_SIZE = 25;
/** Largest page size of every list (DESIGN D12). */
const MAX_PAGE_SIZE = 100;

/**
 * `limit` (1–100, default 25) and `cursor` (opaque) of every list (DESIGN D12). The same object is the
 * REST query and part of a list tool's arguments (the REST edge turns query text into numbers first).
 */
export const ListQuery = z.strictObject({
  limit: z
    ._default(z.number().check(z.int(), z.gte(1), z.lte(MAX_PAGE_SIZE)), DEFAULT_PAGE_SIZE)
    .check(z.describe(`Page size, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}).`)),
  cursor: z
    .optional(z.string().check(z.minLength(1), z.maxLength(2048), z.regex(/^[A-Za-z0-9_-]+$/)))
    .check(
      z.describe(
        'Opaque cursor: the `next_cursor` of the previous page of the same list. Omit for the first page. Any other value is VALIDATION_FAILED.',
      ),
    ),
});

/**
 * A boolean filter: a JSON boolean in tool arguments; in a REST query string the text `true` or
 * `false`, which the REST edge turns into the boolean before validation (`queryValues`).
 * @param description what the filter selects
 */
export function booleanFilter(description: string) {
  return z.optional(z.boolean()).check(z.describe(description));
}

/**
 * A page of a list: `{ data: T[], next_cursor: string | null }` (DESIGN D12).
 * @param item the zod schema of one element
 * @param id the OpenAPI component name of the list
 */
export function listOf<T extends z.ZodMiniType>(item: T, id: string) {
  return z
    .object({
      data: z.array(item),
      next_cursor: z
        .nullable(z.string())
        .check(z.describe('Pass as `cursor` to get the next page; null on the last page.')),
    })
    .register(z.globalRegistry, { id });
}

/** The RFC 9457 problem document every failure returns (DESIGN D1). */
export const Problem = z
  .object({
    type: z.string().check(z.describe('The docs_url of the error code.')),
    title: z.string().check(z.describe('Default message of the error code.')),
    status: z.number().check(z.int()),
    detail: z.string(),
    code: z.string().check(z.describe('Error code from service://enums/error-code.')),
    hint: z.string().check(z.describe('How to fix it.')),
    docs_url: z.string(),
    request_id: z.string(),
    errors: z
      .optional(z.array(z.object({ path: z.string(), message: z.string() })))
      .check(z.describe('Field-level validation errors (VALIDATION_FAILED only).')),
  })
  .register(z.globalRegistry, { id: 'Problem' });

/** Empty JSON body for operations that take none. */
export const EmptyBody = z.strictObject({});

/** `{ id }` path parameters of an object read by its UUID. */
export const IdParams = z.strictObject({ id: Uuid.check(z.describe('The object id.')) });

/** The answer of a delete: `{ id, deleted: true }`. */
export const Deleted = z
  .object({ id: z.string(), deleted: z.literal(true) })
  .register(z.globalRegistry, { id: 'Deleted' });

/** `idempotency_key`: the optional tool argument with the `Idempotency-Key` header's rules (DESIGN D3). */
export const IdempotencyKeyArgument = z
  .optional(z.uuid())
  .check(
    z.describe(
      'Optional UUID, one per distinct write. Retrying with the same key and arguments returns the first result; the same key with other arguments fails with IDEMPOTENCY_KEY_REUSED.',
    ),
  );
