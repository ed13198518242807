import { describe, expect, it } from 'vitest';
import { TOOL_DEFINITIONS } from '../../shared/catalogues/tools.js';
import { handlerOf } from '../../shared/domain/handlers.js';
import { mcpHandlerOf } from '../../shared/mcp/handlers.js';
import type { OperationId } from '../../shared/operations/registry.js';

describe('the tool server’s handlers', () => {
  it('are each tool’s and task’s own operation handler, and nothing else', () => {
    const toolOperations = TOOL_DEFINITIONS.map((tool) => tool.operationId as OperationId);
    expect(toolOperations).toHaveLength(42);
    for (const id of [
      ...toolOperations,
      'startAccessCodeBatchJob',
      'cancelAccessCodeBatchJob',
      'cancelWebhookReplay',
    ] as const)
      expect(mcpHandlerOf(id), id).toBe(handlerOf(id));
    expect(() => mcpHandlerOf('inviteTeamMember')).toThrow('The tool server runs no operation inviteTeamMember');
  });
});
