/**
 * The tool schemas the tool server publishes are in the form strict MCP clients read (MCP Inspector
 * `--strict`: no `type` arrays, no empty `additionalProperties`) and admit exactly what the generated
 * JSON Schema admitted (`strictClientSchema`, checked with ajv on values of every kind).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { listToolsResult, strictClientSchema } from '../../shared/mcp/tools.js';

/** Paths of `type` arrays and empty `additionalProperties` anywhere in `node`. */
function strictWarnings(node: unknown, path = '$'): string[] {
  if (Array.isArray(node)) return node.flatMap((child, index) => strictWarnings(child, `${path}[${index}]`));
  if (!node || typeof node !== 'object') return [];
  const schema = node as Record<string, unknown>;
  const own: string[] = [];
  if (Array.isArray(schema.type)) own.push(`${path}.type`);
  const extra = schema.additionalProperties;
  if (extra && typeof extra === 'object' && !Array.isArray(extra) && Object.keys(extra).length === 0)
    own.push(`${path}.additionalProperties`);
  return [...own, ...Object.entries(schema).flatMap(([key, value]) => strictWarnings(value, `${path}.${key}`))];
}

const SAMPLES: unknown[] = [
  null,
  'text',
  '',
  'a'.repeat(300),
  0,
  7,
  -1.5,
  true,
  false,
  [],
  ['x'],
  [null],
  {},
  { a: 1 },
  { name: 'x', description: null },
  { name: 'x', description: 'y', extra: 1 },
  { name: null },
];

describe('published tool schemas (MCP Inspector --strict)', () => {
  it('have no type arrays and no empty additionalProperties, in any input or output schema', () => {
    const warnings = listToolsResult().tools.flatMap((tool) => [
      ...strictWarnings(tool.inputSchema, `${String(tool.name)}.inputSchema`),
      ...strictWarnings(tool.outputSchema, `${String(tool.name)}.outputSchema`),
    ]);
    expect(warnings).toEqual([]);
  });

  it('turns a zod schema with nullable, enum, record and loose fields into one that admits exactly the same values', () => {
    const Example = z.object({
      name: z.string().min(1).max(200),
      description: z.string().max(10).nullable(),
      status: z.enum(['a', 'b']).nullable(),
      count: z.number().int().nullable().optional(),
      tags: z.array(z.string().nullable()).nullable().optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
      extra: z.object({}).loose().optional(),
    });
    const generated = z.toJSONSchema(Example, { io: 'output' }) as Record<string, unknown>;
    expect(strictWarnings(generated).length).toBeGreaterThan(0); // the zod output has both forms
    const rewritten = strictClientSchema(generated);
    expect(strictWarnings(rewritten)).toEqual([]);

    const ajv = new Ajv2020({ strict: false });
    const before = ajv.compile(generated);
    const after = ajv.compile(rewritten as object);
    const values = [
      ...SAMPLES,
      { name: 'n', description: null, status: null },
      {
        name: 'n',
        description: 'short',
        status: 'a',
        count: 3,
        tags: ['x', null],
        metadata: { k: 1 },
        extra: { any: true },
      },
      { name: 'n', description: 'far too long text', status: 'a' },
      { name: 'n', description: null, status: 'c' },
      { name: 'n', description: null, status: null, count: 1.5 },
      { name: 'n', description: null, status: null, tags: null },
      { name: '', description: null, status: null },
    ];
    for (const value of values) expect(after(value), JSON.stringify(value)).toBe(before(value));
  });

  it('keeps enum and const beside the split branches, and an existing anyOf beside them under allOf', () => {
    const schema = {
      type: ['string', 'null'],
      enum: ['x', null],
      anyOf: [{ maxLength: 1 }, { type: 'null' }],
      description: 'kept',
    };
    const rewritten = strictClientSchema(schema) as Record<string, unknown>;
    expect(rewritten).toEqual({
      enum: ['x', null],
      description: 'kept',
      allOf: [{ anyOf: [{ maxLength: 1 }, { type: 'null' }] }, { anyOf: [{ type: 'string' }, { type: 'null' }] }],
    });
    const ajv = new Ajv2020({ strict: false });
    const before = ajv.compile(schema);
    const after = ajv.compile(rewritten);
    for (const value of [...SAMPLES, 'x', 'xy']) expect(after(value), JSON.stringify(value)).toBe(before(value));
  });
});
