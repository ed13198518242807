/**
 * `bench/RESULTS.md` as `npm run bench` writes it (`bench/results.ts`): what the run printed, split at its
 * section headings into markdown sections in number order, under a header naming the run.
 */
import { describe, expect, it } from 'vitest';
import { createResultsRecorder, resultsPath } from '../../bench/results.js';

const run = {
  startedAt: new Date('2026-01-02T03:04:05.000Z'),
  scale: 'small',
  parts: ['calls', 'replay'],
  loadAtStart: 1.5,
  durationSeconds: 12.34,
  failures: [],
};

describe('bench results file', () => {
  it('prints what it is given and keeps each printed section under its heading, in number order', () => {
    const printed: string[] = [];
    const figures = createResultsRecorder((text) => printed.push(text));
    figures.print('\n1. Calls (2 calls)\n');
    figures.print('call  p50 ms\n----  ------\nGET      1.5');
    figures.print('\n4. Subscriber side\n');
    figures.print('4a. Transitions\n');
    figures.print('pause 3');
    figures.print('\n3. replay-dead of 10 dead deliveries\n');
    figures.print('seconds 1.2');
    figures.print('\n1b. Refusals\n');
    figures.print('unknown 2');

    expect(printed[0]).toBe('\n1. Calls (2 calls)\n');
    const markdown = figures.markdown(run);
    const headings = markdown.split('\n').filter((line) => line.startsWith('## '));
    expect(headings).toEqual([
      '## 1. Calls (2 calls)',
      '## 1b. Refusals',
      '## 3. replay-dead of 10 dead deliveries',
      '## 4. Subscriber side',
      '## 4a. Transitions',
    ]);
    expect(markdown).toContain('## 1. Calls (2 calls)\n\n```text\ncall  p50 ms\n----  ------\nGET      1.5\n```\n');
    expect(markdown).toContain('## 4. Subscriber side\n\n## 4a. Transitions\n\n```text\npause 3\n```\n');
  });

  it('names the run: date, scale, parts, machine, Node.js, duration and checks', () => {
    const figures = createResultsRecorder(() => {});
    const passed = figures.markdown(run);
    expect(passed).toMatch(/^# Benchmark results\n/);
    expect(passed).toContain('| date | 2026-01-02T03:04:05.000Z |');
    expect(passed).toContain('| scale | `small` (`BENCH_SCALE`) |');
    expect(passed).toContain('| parts | calls, replay (');
    expect(passed).toMatch(/\| machine \| .+ \d+ × .+ GiB \|/);
    expect(passed).toContain(`| Node.js | ${process.version} |`);
    expect(passed).toContain('| duration | 12.3 s |');
    expect(passed).toContain('| checks | all passed |');
    expect(figures.markdown({ ...run, failures: ['drain ×1: 3 of 4 deliveries succeeded', 'a | b'] })).toContain(
      '| checks | FAILED: drain ×1: 3 of 4 deliveries succeeded; a \\| b |',
    );
  });

  it('goes to bench/RESULTS.md unless BENCH_RESULTS names another file', () => {
    expect(resultsPath({})).toMatch(/[/\\]bench[/\\]RESULTS\.md$/);
    expect(resultsPath({ BENCH_RESULTS: '/tmp/elsewhere.md' })).toBe('/tmp/elsewhere.md');
  });
});
