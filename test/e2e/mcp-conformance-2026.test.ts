/**
 * The official MCP conformance suite's server scenarios of the 2026-07-28 revision (stateless requests, `_meta`
 * envelopes, `Mcp-Method`/`Mcp-Name` headers, cache hints, input-required results) against the local tool server,
 * in one CLI run through a bearer proxy (test/support/conformance.ts).
 *
 * Every scenario the installed suite lists for 2026-07-28 must be classified below. A scenario the suite lists for
 * 2025-11-25 as well, and that does not apply there (fixture tools, resources and prompts), is checked there
 * (mcp-conformance.test.ts), not again here. The tables are in docs/mcp.md, "MCP conformance".
 */
import { describe, expect, it } from 'vitest';
import { expectPassed, expectRefusedOnlyFor, useConformanceRun } from '../support/conformance.js';

/** Scenarios that fit this server and must pass: a success, no failure, no warning. */
const APPLICABLE: Readonly<Record<string, string>> = {
  'tools-list': 'the 42 tools, served without a session',
  'resources-list': 'the six service://enums/* resources, served without a session',
  'server-sse-multiple-streams': 'concurrent stateless POSTs are all answered (as JSON)',
  'dns-rebinding-protection': 'a foreign Host/Origin is refused with 403; a localhost Host is accepted',
  'http-header-validation': '`Mcp-Method`/`Mcp-Name` that disagree with the body are refused with -32020',
  'sep-2164-resource-not-found': 'an unknown resource URI is -32602 with the URI in `data`',
  'input-required-result-unsupported-methods': 'no input-required result on methods that may not return one',
  'input-required-result-validate-input': 'input responses the client made up are not trusted',
};

/**
 * Scenarios that pass except for checks that need the suite's fixtures: at least `successes` checks pass, and every
 * failed check fails for the stated reason.
 */
const PARTLY_APPLICABLE: Readonly<Record<string, { reason: string; failure: RegExp; successes: number }>> = {
  'server-stateless': {
    reason:
      'Four checks call diagnostic tools the suite’s own server publishes (`test_missing_capability`, ' +
      '`test_streaming_elicitation`, `test_logging_tool`); the interface fixes the tools.',
    failure:
      /^Not testable: server does not list the diagnostic tool 'test_(missing_capability|streaming_elicitation|logging_tool)'/,
    successes: 20,
  },
  caching: {
    reason: 'The cache hints of `prompts/list`: this server publishes no prompts (interface).',
    failure: /^prompts\/list returned JSON-RPC error -32601: Method not found/,
    successes: 5,
  },
};

/**
 * Scenarios that do not apply, with the reason and the message that reason produces. Every failed or warned check
 * must carry it, so a real regression cannot hide behind it. The input-required scenarios call fixture tools
 * (`test_input_required_result_*`); this server's own input-required results (confirmation before destructive calls)
 * are tested in mcp-confirmation.test.ts.
 */
const NOT_APPLICABLE: Readonly<Record<string, { reason: string; failure: RegExp }>> = {
  'http-custom-header-server-validation': {
    reason: 'Needs a tool whose parameters carry `x-mcp-header` annotations; no tool of the interface has one.',
    failure: /^Not testable: server exposes no tool with x-mcp-header annotations/,
  },
  'input-required-result-basic-elicitation': {
    reason: 'Calls the fixture tool `test_input_required_result_elicitation`.',
    failure: /Unknown tool: test_input_required_result_elicitation/,
  },
  'input-required-result-basic-sampling': {
    reason: 'Calls the fixture tool `test_input_required_result_sampling`.',
    failure: /Unknown tool: test_input_required_result_sampling/,
  },
  'input-required-result-basic-list-roots': {
    reason: 'Calls the fixture tool `test_input_required_result_list_roots`.',
    failure: /Unknown tool: test_input_required_result_list_roots/,
  },
  'input-required-result-request-state': {
    reason: 'Calls the fixture tool `test_input_required_result_request_state`.',
    failure: /Unknown tool: test_input_required_result_request_state/,
  },
  'input-required-result-multiple-input-requests': {
    reason: 'Calls the fixture tool `test_input_required_result_multiple_inputs`.',
    failure: /Unknown tool: test_input_required_result_multiple_inputs/,
  },
  'input-required-result-multi-round': {
    reason: 'Calls the fixture tool `test_input_required_result_multi_round` (the suite reports no input request).',
    failure: /^Expected InputRequiredResult with inputRequests and requestState$/,
  },
  'input-required-result-missing-input-response': {
    reason: 'Calls the fixture tool `test_input_required_result_elicitation` (a warning: the tool is unknown).',
    failure: /^Server returned JSON-RPC error instead of re-requesting via InputRequiredResult/,
  },
  'input-required-result-non-tool-request': {
    reason: 'Gets the fixture prompt `test_input_required_result_prompt`; no prompts (interface).',
    failure: /Method not found/,
  },
  'input-required-result-result-type': {
    reason: 'Calls the fixture tool `test_input_required_result_elicitation`.',
    failure: /Unknown tool: test_input_required_result_elicitation/,
  },
  'input-required-result-tampered-state': {
    reason: 'Calls the fixture tool `test_input_required_result_tampered_state` (the suite reports its prerequisite).',
    failure: /^Prerequisite failed: could not get initial InputRequiredResult/,
  },
  'input-required-result-capability-check': {
    reason: 'Calls the fixture tool `test_input_required_result_capabilities`.',
    failure: /Unknown tool: test_input_required_result_capabilities/,
  },
  'input-required-result-ignore-extra-params': {
    reason: 'Calls the fixture tool `test_input_required_result_elicitation` (a warning: the tool is unknown).',
    failure: /Unknown tool: test_input_required_result_elicitation/,
  },
};

const suite = useConformanceRun('2026-07-28');

describe('MCP conformance suite, server scenarios of 2026-07-28', () => {
  it('lists the scenarios, and every one is classified here or checked on 2025-11-25', () => {
    const listed = suite.scenarios('2026-07-28');
    expect(listed.length).toBeGreaterThanOrEqual(30);
    const classified = [...Object.keys(APPLICABLE), ...Object.keys(PARTLY_APPLICABLE), ...Object.keys(NOT_APPLICABLE)];
    expect(classified.filter((scenario) => !listed.includes(scenario))).toEqual([]);
    // What is left is a scenario of both revisions that needs the suite's fixtures (tools, resources, prompts).
    const checkedOn2025 = listed.filter(
      (scenario) => suite.scenarios('2025-11-25').includes(scenario) && !classified.includes(scenario),
    );
    expect(listed.filter((scenario) => !classified.includes(scenario) && !checkedOn2025.includes(scenario))).toEqual(
      [],
    );
    expect(
      checkedOn2025.filter(
        (scenario) =>
          !/^(tools-call|resources-read|resources-templates|prompts|completion|json-schema)-/.test(scenario),
      ),
    ).toEqual([]);
  });

  it.each(Object.keys(APPLICABLE))('passes %s', (scenario) => {
    expectPassed(suite.run(scenario));
  });

  it.each(Object.keys(PARTLY_APPLICABLE))('passes %s but for the checks that need the suite’s fixtures', (scenario) => {
    const { failure, successes } = PARTLY_APPLICABLE[scenario];
    expectRefusedOnlyFor(suite.run(scenario), failure, successes);
  });

  it.each(Object.keys(NOT_APPLICABLE))('fails %s only for the reason it does not apply', (scenario) => {
    expectRefusedOnlyFor(suite.run(scenario), NOT_APPLICABLE[scenario].failure);
  });
});
