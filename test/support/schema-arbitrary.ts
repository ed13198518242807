/**
 * fast-check arbitraries of the values a JSON Schema (draft 2020-12, as OpenAPI 3.1 embeds it) accepts,
 * for the keywords the service's generated `openapi.json` uses: `type` (one or several), `const`, `enum`,
 * `anyOf`/`oneOf`, `format` (uuid, email, date-time, uri, ipv4, ipv6, cidrv4, cidrv6), `pattern`,
 * `minLength`/`maxLength`, `minimum`/`maximum`/`exclusiveMinimum`/`exclusiveMaximum`, `items`,
 * `minItems`/`maxItems`, `properties`/`required`. The schemas must be dereferenced. A generated value is
 * only a candidate: callers check it with ajv and drop the ones a keyword this module ignores rejects
 * (see {@link validValues}), so a value called valid is valid by the document itself.
 */
import fc from 'fast-check';
import type { ValidateFunction } from 'ajv';

/** A dereferenced JSON Schema (the subset described above). */
export type JsonSchema = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  [keyword: string]: unknown;
};

/** Options of {@link schemaArbitrary}. */
export interface SchemaArbitraryOptions {
  /**
   * Known values for a string property or parameter named `name` (e.g. ids harvested from earlier
   * answers), drawn beside generated ones; undefined → generated only.
   */
  known?: (name: string) => readonly string[] | undefined;
}

/** The most array items generated (the schemas allow up to 1,000 access codes, for example). */
const MAX_GENERATED_ITEMS = 4;

const cidr = (address: fc.Arbitrary<string>, bits: number) =>
  fc.tuple(address, fc.integer({ min: 0, max: bits })).map(([ip, prefix]) => `${ip}/${prefix}`);

function formatted(format: string): fc.Arbitrary<string> | null {
  switch (format) {
    case 'uuid':
      return fc.uuid({ version: 4 });
    case 'email':
      return fc
        .tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,10}$/), fc.constantFrom('example.com', 'mail.example.org'))
        .map(([user, host]) => `${user}@${host}`);
    case 'date-time':
      return fc
        .date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-01-01T00:00:00Z'), noInvalidDate: true })
        .map((date) => date.toISOString());
    case 'uri':
      return fc.constantFrom(
        'https://receiver.example/hooks',
        'https://example.com/a?b=c',
        'https://hooks.example.org/x/y',
      );
    case 'ipv4':
      return fc.ipV4();
    case 'ipv6':
      return fc.ipV6();
    case 'cidrv4':
      return cidr(fc.ipV4(), 32);
    case 'cidrv6':
      return cidr(fc.ipV6(), 128);
    default:
      return null;
  }
}

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 40, Math.max(minLength, 40));
  const byFormat = schema.format ? formatted(schema.format) : null;
  if (byFormat) return byFormat;
  if (schema.pattern) {
    let pattern: RegExp;
    try {
      pattern = new RegExp(schema.pattern);
    } catch {
      pattern = /^.*$/;
    }
    return fc
      .stringMatching(pattern)
      .filter((value) => value.length >= minLength && value.length <= (schema.maxLength ?? Infinity));
  }
  return fc.string({ minLength, maxLength, unit: 'grapheme-ascii' });
}

function numberArbitrary(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const low =
    schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + (integer ? 1 : Number.EPSILON) : schema.minimum;
  const high =
    schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - (integer ? 1 : Number.EPSILON) : schema.maximum;
  if (integer) {
    const min = Math.ceil(low ?? -1_000);
    const max = Math.floor(high ?? Math.max(min + 1_000, 1_000));
    return fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max));
  }
  return fc.double({ min: low ?? -1e6, max: high ?? 1e6, noNaN: true, noDefaultInfinity: true });
}

/**
 * An arbitrary of values `schema` is meant to accept (see the module note: check them with ajv).
 * Objects get every required property and a random subset of the optional ones; nothing else.
 */
export function schemaArbitrary(
  schema: JsonSchema,
  options: SchemaArbitraryOptions = {},
  name = '',
): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    // Alternatives beside the schema's own properties (`{ properties, oneOf: [{ required }] }`) narrow it:
    // each is generated merged with the rest of the schema.
    const { anyOf: _anyOf, oneOf: _oneOf, ...base } = schema;
    const narrows = base.type !== undefined || base.properties !== undefined;
    const merged = (alternative: JsonSchema): JsonSchema =>
      narrows
        ? {
            ...base,
            ...alternative,
            properties: { ...base.properties, ...alternative.properties },
            required: [...(base.required ?? []), ...(alternative.required ?? [])],
          }
        : alternative;
    return fc.oneof(...alternatives.map((alternative) => schemaArbitrary(merged(alternative), options, name)));
  }
  const types = Array.isArray(schema.type)
    ? schema.type
    : schema.type
      ? [schema.type]
      : schema.properties
        ? ['object']
        : [];
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  if (types.length > 1) return fc.oneof(...types.map((type) => schemaArbitrary({ ...schema, type }, options, name)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return numberArbitrary(schema, true);
    case 'number':
      return numberArbitrary(schema, false);
    case 'string': {
      const generated = stringArbitrary(schema);
      const known = options.known?.(name);
      return known?.length
        ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: generated })
        : generated;
    }
    case 'array': {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? MAX_GENERATED_ITEMS, MAX_GENERATED_ITEMS));
      const items = schemaArbitrary(schema.items ?? {}, options, name);
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (value) => JSON.stringify(value) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object': {
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, property] of Object.entries(properties)) record[key] = schemaArbitrary(property, options, key);
      return fc.record(record, { requiredKeys: Object.keys(properties).filter((key) => required.has(key)) });
    }
    default:
      throw new Error(`schemaArbitrary: unsupported type ${String(types[0])}`);
  }
}

/** Values of `arbitrary` that `validate` (ajv, compiled from the same schema) accepts. */
export function validValues<T>(arbitrary: fc.Arbitrary<T>, validate: ValidateFunction): fc.Arbitrary<T> {
  return arbitrary.filter((value) => validate(value) === true);
}

/**
 * A value `schema` refuses, made from a valid one: a required property removed, an unknown property
 * added (when `additionalProperties` is false), a property of the wrong type, or the wrong type
 * altogether. Candidates: callers keep those ajv refuses.
 */
export function invalidArbitrary(schema: JsonSchema, valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const wrongType = fc.oneof(
    fc.constant(null),
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.boolean(),
    fc.constant([]),
    fc.constant({ nested: true }),
  );
  const properties = Object.keys(schema.properties ?? {});
  const required = schema.required ?? [];
  const mutations: fc.Arbitrary<unknown>[] = [wrongType];
  if (properties.length) {
    mutations.push(
      fc
        .tuple(valid, fc.constantFrom(...properties), wrongType)
        .map(([value, key, wrong]) => ({ ...(value as object), [key]: wrong })),
    );
  }
  if (required.length) {
    mutations.push(
      fc.tuple(valid, fc.constantFrom(...required)).map(([value, key]) => {
        const copy = { ...(value as Record<string, unknown>) };
        delete copy[key];
        return copy;
      }),
    );
  }
  if (schema.additionalProperties === false)
    mutations.push(valid.map((value) => ({ ...(value as object), not_a_field: 1 })));
  return fc.oneof(...mutations);
}
