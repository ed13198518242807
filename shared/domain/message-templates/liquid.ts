import { Liquid, type Template } from 'liquidjs';
import type { FieldError } from '../../errors.js';

/**
 * The sandboxed Liquid engine of message templates (DESIGN D32): only the documented variables (unknown ones and
 * unknown filters are errors), own properties only (no prototype or constructor access), no file system and no
 * `include`, `render` or `layout` tags, and bounded parse size, render time and memory.
 */

/** Tags that would reach other templates (and through them a file system): removed from the engine. */
const REMOVED_TAGS = ['include', 'render', 'layout'] as const;

const engine = new Liquid({
  // An empty in-memory template map instead of the file system: no partial or layout can be read.
  templates: {},
  strictVariables: true,
  strictFilters: true,
  ownPropertyOnly: true,
  cache: false,
  parseLimit: 50_000,
  // Milliseconds of rendering at most: far above a real template's (under a millisecond), generous for a loaded host.
  renderLimit: 2_000,
  memoryLimit: 1_000_000,
});
for (const tag of REMOVED_TAGS) delete (engine.tags as Record<string, unknown>)[tag];

/** A Liquid failure: its message without liquidjs's position suffix, and the line and column (1-based) it points at. */
interface LiquidFailure {
  message: string;
  line: number | null;
  column: number | null;
}

/** Parses then renders `text` with `variables` (throws a liquidjs error on a bad template). */
export function renderLiquid(text: string, variables: Record<string, unknown>): string {
  const template: Template[] = engine.parse(text);
  return String(engine.renderSync(template, variables));
}

/** What went wrong in `error` (a liquidjs error or anything else thrown while rendering). */
function liquidFailure(error: unknown): LiquidFailure {
  const token = (error as { token?: { getPosition?: () => [number, number] } } | null)?.token;
  const position = typeof token?.getPosition === 'function' ? token.getPosition() : null;
  const raw = error instanceof Error ? error.message : String(error);
  const message = raw.replace(/, line:\d+, col:\d+$/, '');
  return { message, line: position?.[0] ?? null, column: position?.[1] ?? null };
}

/**
 * Renders `text` with `variables` and answers the field error naming `path`, the line and the column when it fails,
 * else null.
 */
export function liquidFieldError(path: string, text: string, variables: Record<string, unknown>): FieldError | null {
  try {
    renderLiquid(text, variables);
    return null;
  } catch (error) {
    const failure = liquidFailure(error);
    const at = failure.line === null ? '' : ` at line ${failure.line}, column ${failure.column}`;
    return { path, message: `Liquid error${at}: ${failure.message}` };
  }
}
