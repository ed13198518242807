/**
 * `bench/RESULTS.md`: the figures `npm run bench` printed, kept as a markdown file beside the bench and
 * rewritten at the end of every run that gets there (checks failed included; not when a part throws or
 * the run is stopped). It holds the run's date, machine, Node.js version, scale and parts, the checks,
 * then every section the run printed — each printed heading (`1.`, `1b.`, `2c.`, `4a.`...) becomes a
 * markdown heading over its printed lines in a text block, sections in number order.
 *
 * `BENCH_RESULTS=<path>` writes the file elsewhere (a partial or small run need not replace the full
 * figures).
 *
 * @module
 */
import { writeFileSync } from 'node:fs';
import { arch, cpus, loadavg, release, totalmem, type } from 'node:os';
import { fileURLToPath } from 'node:url';

/** Where the results go: `BENCH_RESULTS`, else `bench/RESULTS.md`. */
export function resultsPath(env: NodeJS.ProcessEnv = process.env): string {
  const value = env.BENCH_RESULTS?.trim();
  return value ? value : fileURLToPath(new URL('./RESULTS.md', import.meta.url));
}

/** What the run was: the header of the results file. */
export interface RunDescription {
  /** When the run started. */
  startedAt: Date;
  /** `BENCH_SCALE`. */
  scale: string;
  /** The parts run (`BENCH_PARTS`), in the bench's order. */
  parts: readonly string[];
  /** The 1-minute load average when the run started. */
  loadAtStart: number;
  durationSeconds: number;
  /** The checks that failed (empty: all passed). */
  failures: readonly string[];
}

/** The machine, as one line: OS, CPU model × cores, memory. */
function describeMachine(): string {
  const processors = cpus();
  const model = processors[0]?.model.trim().replace(/\s+/g, ' ') ?? 'unknown CPU';
  const memoryGiB = totalmem() / 1024 ** 3;
  return `${type()} ${release()} ${arch()}; ${processors.length} × ${model}; ${memoryGiB.toFixed(1)} GiB`;
}

/** The current 1-minute load average. */
export function currentLoad(): number {
  return loadavg()[0] ?? 0;
}

interface Section {
  id: string;
  title: string;
  lines: string[];
}

/** A printed section heading: `1. ...`, `2b. ...` at the start of a line. */
const HEADING = /^(\d+)([a-z]?)\. (\S.*)$/;

/** Orders `1` < `1b` < `1c` < `2` < ... < `4` < `4a`. */
function sectionOrder(a: Section, b: Section): number {
  const [, an = '', as = ''] = /^(\d+)([a-z]?)$/.exec(a.id) ?? [];
  const [, bn = '', bs = ''] = /^(\d+)([a-z]?)$/.exec(b.id) ?? [];
  return Number(an) - Number(bn) || as.localeCompare(bs);
}

/**
 * Prints the figures on stdout and keeps them for the results file. `print` takes what `console.log`
 * would (one string, possibly several lines); `markdown` renders the kept sections.
 */
export function createResultsRecorder(write: (text: string) => void = (text) => console.log(text)) {
  const sections: Section[] = [];
  let current: Section | null = null;

  function record(text: string): void {
    for (const line of text.split('\n')) {
      const heading = HEADING.exec(line);
      if (heading) {
        current = { id: `${heading[1]}${heading[2]}`, title: heading[3], lines: [] };
        sections.push(current);
      } else if (current) {
        current.lines.push(line);
      }
    }
  }

  return {
    print(text = ''): void {
      write(text);
      record(text);
    },

    markdown(run: RunDescription): string {
      const load = currentLoad();
      const out: string[] = [
        '# Benchmark results',
        '',
        'Written by `npm run bench` (`bench/run.ts`, `bench/results.ts`) at the end of each run: the figures the',
        'run printed, section by section. Do not edit by hand; run the bench again. What each figure means is',
        'in [`docs/scale.md`](../docs/scale.md).',
        '',
        '| run | |',
        '|---|---|',
        `| date | ${run.startedAt.toISOString()} |`,
        `| scale | \`${run.scale}\` (\`BENCH_SCALE\`) |`,
        `| parts | ${run.parts.join(', ')} (\`BENCH_PARTS\`; the store's own figures always run) |`,
        `| machine | ${describeMachine()} |`,
        `| load average (1 min) | ${run.loadAtStart.toFixed(2)} at the start, ${load.toFixed(2)} at the end |`,
        `| Node.js | ${process.version} |`,
        `| duration | ${run.durationSeconds.toFixed(1)} s |`,
        `| checks | ${run.failures.length ? `FAILED: ${run.failures.map((failure) => failure.replace(/\|/g, '\\|')).join('; ')}` : 'all passed'} |`,
      ];
      for (const section of [...sections].sort(sectionOrder)) {
        out.push('', `## ${section.id}. ${section.title}`);
        const lines = [...section.lines];
        while (lines.length && !lines[0].trim()) lines.shift();
        while (lines.length && !lines[lines.length - 1].trim()) lines.pop();
        if (lines.length) out.push('', '```text', ...lines, '```');
      }
      return `${out.join('\n')}\n`;
    },
  };
}

/** Writes the results file (see {@link resultsPath}) and returns its path. */
export function writeResults(markdown: string, path: string = resultsPath()): string {
  writeFileSync(path, markdown);
  return path;
}
