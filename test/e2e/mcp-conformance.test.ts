/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, server scenarios of the 2025-11-25
 * revision) against the local tool server (`startLocalService`, the same Lambda handler as on AWS), in one CLI run
 * through a bearer proxy (test/support/conformance.ts). The 2026-07-28 scenarios are in mcp-conformance-2026.test.ts.
 *
 * Every scenario the installed suite lists must be classified below:
 * - APPLICABLE: must pass (at least one SUCCESS check, no FAILURE, no WARNING).
 * - INFORMATIONAL: the suite records only INFO for a JSON-response server; must have no FAILURE.
 * - NOT_APPLICABLE: needs fixtures or features this service does not have by design; every failed or warned
 *   check must fail for exactly the stated reason (so a real regression cannot hide behind it).
 * The same table is in docs/mcp.md, "MCP conformance".
 */
import { describe, expect, it } from 'vitest';
import {
  checksWith,
  describeRun,
  expectPassed,
  expectRefusedOnlyFor,
  useConformanceRun,
} from '../support/conformance.js';

/** Scenarios that fit this server (JSON responses, no test fixtures) and must pass. */
const APPLICABLE: Readonly<Record<string, string>> = {
  'server-initialize': 'initialize handshake, server info, capabilities',
  'server-session-lifecycle': 'a session is created at initialize, used by its id, and ended by DELETE',
  ping: 'ping answers {}',
  'tools-list': 'every tool has name, description and inputSchema',
  'resources-list': 'the six service://enums/* resources',
  'server-sse-multiple-streams': 'three concurrent POSTs on one session are all accepted (answered as JSON)',
  'dns-rebinding-protection':
    'a foreign Host/Origin (evil.example.com) is refused with 403 by the local server\u2019s Host validation; a localhost Host is accepted',
};

/** Scenarios whose checks are only INFO for a JSON-response server; they must not fail. */
const INFORMATIONAL: Readonly<Record<string, string>> = {
  'server-sse-polling':
    'SSE polling/resumption (SEP-1699) needs SSE responses and the suite\u2019s `test_reconnection` tool; this server answers JSON (DESIGN D5), which the suite records as INFO ("priming event tests not applicable").',
};

/** Scenarios that do not apply, with the reason and the failure message that reason produces. */
const NOT_APPLICABLE: Readonly<Record<string, { reason: string; failure: RegExp }>> = {
  'logging-set-level': {
    reason: 'The server declares no `logging` capability (not in the interface); `logging/setLevel` is -32601.',
    failure: /Method not found/,
  },
  'completion-complete': {
    reason:
      'No prompts or resource templates, so no `completions` capability; also needs the suite\u2019s `test_prompt_with_arguments`.',
    failure: /Method not found/,
  },
  'tools-call-simple-text': {
    reason: 'Calls the suite\u2019s fixture tool `test_simple_text`; the interface fixes the tools.',
    failure: /Unknown tool: test_simple_text/,
  },
  'tools-call-image': {
    reason: 'Calls the fixture tool `test_image_content`.',
    failure: /Unknown tool: test_image_content/,
  },
  'tools-call-audio': {
    reason: 'Calls the fixture tool `test_audio_content`.',
    failure: /Unknown tool: test_audio_content/,
  },
  'tools-call-embedded-resource': {
    reason: 'Calls the fixture tool `test_embedded_resource`.',
    failure: /Unknown tool: test_embedded_resource/,
  },
  'tools-call-mixed-content': {
    reason: 'Calls the fixture tool `test_multiple_content_types`.',
    failure: /Unknown tool: test_multiple_content_types/,
  },
  'tools-call-with-logging': {
    reason: 'Needs the `logging` capability and the fixture tool `test_tool_with_logging`.',
    failure: /-32601: Method not found|Unknown tool: test_tool_with_logging/,
  },
  'tools-call-error': {
    reason:
      'Calls the fixture tool `test_error_handling` (this server\u2019s own isError results are covered in mcp-protocol.test.ts).',
    failure: /Unknown tool: test_error_handling/,
  },
  'tools-call-with-progress': {
    reason:
      'Calls the fixture tool `test_tool_with_progress`; progress notifications need a stream (JSON responses only).',
    failure: /Unknown tool: test_tool_with_progress/,
  },
  'tools-call-sampling': {
    reason: 'Calls the fixture tool `test_sampling`; server-to-client requests need a stream (JSON responses only).',
    failure: /Unknown tool: test_sampling/,
  },
  'tools-call-elicitation': {
    reason: 'Calls the fixture tool `test_elicitation`; server-to-client requests need a stream.',
    failure: /Unknown tool: test_elicitation/,
  },
  'json-schema-2020-12': {
    reason: 'Looks for the fixture tool `json_schema_2020_12_tool`.',
    failure: /Tool 'json_schema_2020_12_tool' not found/,
  },
  'elicitation-sep1034-defaults': {
    reason: 'Calls the fixture tool `test_elicitation_sep1034_defaults`; elicitation needs a stream.',
    failure: /Unknown tool: test_elicitation_sep1034_defaults/,
  },
  'elicitation-sep1330-enums': {
    reason: 'Calls the fixture tool `test_elicitation_sep1330_enums`; elicitation needs a stream.',
    failure: /Unknown tool: test_elicitation_sep1330_enums/,
  },
  'resources-read-text': {
    reason:
      'Reads the fixture resource `test://static-text`; this server\u2019s resources are `service://enums/*` (unknown URI: -32002).',
    failure: /Resource not found: test:\/\/static-text/,
  },
  'resources-read-binary': {
    reason: 'Reads the fixture resource `test://static-binary`.',
    failure: /Resource not found: test:\/\/static-binary/,
  },
  'resources-templates-read': {
    reason: 'Reads the fixture template `test://template/{id}/data`; this server has no resource templates.',
    failure: /Resource not found: test:\/\/template\/123\/data/,
  },
  'resources-subscribe': {
    reason:
      'No `resources.subscribe` capability: the resources are static catalogues, and updates would need a stream.',
    failure: /Method not found/,
  },
  'resources-unsubscribe': {
    reason: 'No `resources.subscribe` capability (as above).',
    failure: /Method not found/,
  },
  'prompts-list': {
    reason: 'The interface says the server publishes no prompts: no `prompts` capability.',
    failure: /Method not found/,
  },
  'prompts-get-simple': { reason: 'No prompts (interface).', failure: /Method not found/ },
  'prompts-get-with-args': { reason: 'No prompts (interface).', failure: /Method not found/ },
  'prompts-get-embedded-resource': { reason: 'No prompts (interface).', failure: /Method not found/ },
  'prompts-get-with-image': { reason: 'No prompts (interface).', failure: /Method not found/ },
};

const suite = useConformanceRun('2025-11-25');

describe('MCP conformance suite, server scenarios of 2025-11-25', () => {
  it('lists server scenarios, and every one is classified here (a new suite version must be reviewed)', () => {
    const listed = suite.scenarios('2025-11-25');
    expect(listed.length).toBeGreaterThanOrEqual(30);
    const classified = new Set([
      ...Object.keys(APPLICABLE),
      ...Object.keys(INFORMATIONAL),
      ...Object.keys(NOT_APPLICABLE),
    ]);
    expect(listed.filter((scenario) => !classified.has(scenario))).toEqual([]);
    expect([...classified].filter((scenario) => !listed.includes(scenario))).toEqual([]);
  });

  it.each(Object.keys(APPLICABLE))('passes %s', (scenario) => {
    expectPassed(suite.run(scenario));
  });

  it.each(Object.keys(INFORMATIONAL))('records only information, no failure, for %s', (scenario) => {
    const run = suite.run(scenario);
    expect(run.timedOut, describeRun(run)).toBe(false);
    expect(checksWith(run, 'FAILURE'), describeRun(run)).toEqual([]);
    expect(
      run.checks.some((check) => check.id === 'server-sse-content-type' && check.status === 'INFO'),
      describeRun(run),
    ).toBe(true);
  });

  it.each(Object.keys(NOT_APPLICABLE))('fails %s only for the reason it does not apply', (scenario) => {
    expectRefusedOnlyFor(suite.run(scenario), NOT_APPLICABLE[scenario].failure);
  });
});
