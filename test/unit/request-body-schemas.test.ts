/**
 * The document and the edge agree on request bodies (DESIGN D1, D13): every body the served `openapi.json` calls valid
 * — generated from the document itself, 3,000 per operation, with a fixed seed — passes the operation's own zod body
 * schema. A mismatch is a promise the server breaks: a body the document allows answered VALIDATION_FAILED (a field the
 * server trims before its length check must not allow spaces at its ends in the document).
 */
import SwaggerParser from '@apidevtools/swagger-parser';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../shared/http/openapi.js';
import { OPERATIONS } from '../../shared/operations/registry.js';
import { documentAjv } from '../support/document-ajv.js';
import { schemaArbitrary, validValues, type JsonSchema } from '../support/schema-arbitrary.js';

/** Bodies generated per operation. */
const SAMPLES = 3_000;

describe('request bodies', () => {
  it('accepts every body the document calls valid, for every operation with a body', async () => {
    const document = (await SwaggerParser.dereference(structuredClone(openApiDocument()) as never)) as unknown as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
    };
    const ajv = documentAjv();
    const refused: string[] = [];
    const withBody = OPERATIONS.filter((operation) => operation.body);
    for (const operation of withBody) {
      const schema =
        document.paths[operation.rest.path][operation.rest.method.toLowerCase()].requestBody!.content[
          'application/json'
        ].schema;
      const bodies = fc.sample(validValues(schemaArbitrary(schema), ajv.compile(schema)), {
        numRuns: SAMPLES,
        seed: 7,
      });
      for (const body of bodies) {
        const parsed = operation.body!.safeParse(body);
        if (!parsed.success)
          refused.push(`${operation.id}: ${JSON.stringify(body)} (${parsed.error.issues[0].message})`);
      }
    }
    expect(withBody.length).toBeGreaterThan(40);
    expect(refused.slice(0, 5), refused.slice(0, 5).join('\n')).toEqual([]);
  }, 60_000);
});
