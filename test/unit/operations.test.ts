import { describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { handlerOf } from '../../shared/domain/handlers.js';
import { MODULES } from '../../shared/domain/modules.js';
import { createProject } from '../../shared/domain/projects/handlers.js';
import { projectsModule } from '../../shared/domain/projects/operations.js';
import type { HandlersOf } from '../../shared/operations/handler.js';
import { OPERATIONS, inputSchemaOf, routeKey, type OperationId } from '../../shared/operations/registry.js';

// Compile-time rule (DESIGN D13), checked by `npm test`'s type check: a module's handler map that
// lacks one of its operations does not compile.
// @ts-expect-error listProjects and getProject have no handler here
const incomplete = { createProject } satisfies HandlersOf<typeof projectsModule>;

describe('operation definitions (DESIGN D13)', () => {
  it('gives every operation a unique id, a unique route and a handler', () => {
    expect(incomplete.createProject).toBe(createProject);
    const ids = OPERATIONS.map((operation) => operation.id);
    expect(new Set(ids).size).toBe(ids.length);
    const routes = OPERATIONS.map(routeKey);
    expect(new Set(routes).size).toBe(routes.length);
    for (const operation of OPERATIONS)
      expect(typeof handlerOf(operation.id as OperationId), operation.id).toBe('function');
  });

  it('lists each module once, under its own folder', () => {
    const folders = MODULES.map((module) => module.folder);
    expect(new Set(folders).size).toBe(folders.length);
    for (const operation of OPERATIONS) expect(folders).toContain(operation.module);
  });

  it('names every path parameter in the params schema, and keeps params, query and body fields apart', () => {
    for (const operation of OPERATIONS) {
      const pathParameters = [...operation.rest.path.matchAll(/\{([a-z_]+)\}/g)].map((match) => match[1]);
      expect(Object.keys(operation.params?.shape ?? {}).sort(), operation.id).toEqual(pathParameters.sort());
      const fields = [operation.params, operation.query, operation.body].flatMap((schema) =>
        Object.keys(schema?.shape ?? {}),
      );
      expect(new Set(fields).size, operation.id).toBe(fields.length);
    }
  });

  it('derives each tool from its operation: the input is the path parameters, query and body as one object', () => {
    for (const operation of OPERATIONS.filter((candidate) => candidate.tool)) {
      const tool = TOOL_DEFINITIONS.find((definition) => definition.name === operation.tool!.name)!;
      expect(tool.operationId).toBe(operation.id);
      expect(tool.ability).toBe(operation.ability);
      expect(tool.teamWide).toBe(operation.teamWide);
      expect(tool.outputSchema).toBe(operation.output);
      expect(Object.keys(tool.inputSchema.shape).sort()).toEqual(
        Object.keys(inputSchemaOf(operation, { withIdempotencyKey: true }).shape).sort(),
      );
      expect(Object.keys(tool.inputSchema.shape).includes('idempotency_key')).toBe(operation.rest.method !== 'GET');
    }
  });

  it('publishes one tool per operation with a tool binding, with no name twice', () => {
    expect(OPERATIONS.filter((operation) => operation.tool)).toHaveLength(TOOL_DEFINITIONS.length);
    expect(new Set(TOOL_DEFINITIONS.map((tool) => tool.name)).size).toBe(TOOL_DEFINITIONS.length);
    expect(TOOL_DEFINITIONS.map((tool) => tool.operationId).sort()).toEqual(
      OPERATIONS.filter((operation) => operation.tool)
        .map((operation) => operation.id)
        .sort(),
    );
  });
});
