/**
 * Where the bench writes: progress lines on stderr, and the figures on stdout, kept section by section for
 * `bench/RESULTS.md` (results.ts); with the plain-text table printer of the figures.
 *
 * @module
 */
import { createResultsRecorder } from './results.js';

/** Writes one progress line on stderr (`[bench] <line>`). */
export const progress = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** The figures: printed on stdout and kept for `bench/RESULTS.md`. */
export const figures = createResultsRecorder();
/** Prints figures on stdout (one string, possibly several lines) and keeps them for the results file. */
export const out = (text: string) => figures.print(text);

/** Formats rows as a plain-text table with a header line and right-aligned numeric cells. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = rows.map((row) => row.map((cell) => (typeof cell === 'number' ? String(cell) : cell)));
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...cells.map((row) => (row[column] ?? '').length)),
  );
  const numeric = headers.map((_, column) => rows.every((row) => typeof row[column] === 'number'));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column]) : cell.padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(line)].join('\n');
}
