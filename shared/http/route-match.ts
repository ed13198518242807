import type { HttpMethod } from '../operations/definition.js';

/** Percent-decodes a path segment; null when it is not valid percent-encoding (the path matches no route). */
function safeDecode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

const patterns = new Map<string, readonly string[]>();

/** The segments of a route pattern, split once per process. */
function patternOf(path: string): readonly string[] {
  let pattern = patterns.get(path);
  if (!pattern) patterns.set(path, (pattern = path.split('/')));
  return pattern;
}

/**
 * Matches a method and concrete path against route patterns as API Gateway does: `{param}` segments
 * match one non-empty segment, literal segments win over parameters. Returns the best route of that
 * method with its decoded path parameters; else `{ allowedMethods }` — the methods of the most specific
 * patterns the path matches (→ 405 with `Allow`); else null (→ 404). Pure and schema-free, so the `$default`
 * route's Lambda can use it with a plain list of route keys.
 */
export function matchPath<R>(
  routes: readonly R[],
  bindingOf: (route: R) => { method: HttpMethod; path: string },
  method: string,
  path: string,
): { route: R; pathParameters: Record<string, string> } | { allowedMethods: HttpMethod[] } | null {
  const segments = path.split('/');
  const candidates: { route: R; method: HttpMethod; pathParameters: Record<string, string>; literal: number }[] = [];
  for (const route of routes) {
    const binding = bindingOf(route);
    const pattern = patternOf(binding.path);
    if (pattern.length !== segments.length) continue;
    const pathParameters: Record<string, string> = {};
    let literal = 0;
    let matched = true;
    for (let index = 0; index < pattern.length; index++) {
      const part = pattern[index];
      if (part.startsWith('{') && part.endsWith('}')) {
        const value = segments[index] ? safeDecode(segments[index]) : null;
        if (value === null) {
          matched = false;
          break;
        }
        pathParameters[part.slice(1, -1)] = value;
      } else if (part === segments[index]) {
        literal++;
      } else {
        matched = false;
        break;
      }
    }
    if (matched) candidates.push({ route, method: binding.method, pathParameters, literal });
  }
  if (candidates.length === 0) return null;
  const sameMethod = candidates.filter((candidate) => candidate.method === method);
  if (sameMethod.length > 0) {
    const best = sameMethod.reduce((a, b) => (b.literal > a.literal ? b : a));
    return { route: best.route, pathParameters: best.pathParameters };
  }
  // Allow lists the methods of the path itself: the most specific patterns that match (a literal path such
  // as `/replay-dead` does not offer the methods of the `{id}` pattern beside it).
  const mostLiteral = Math.max(...candidates.map((candidate) => candidate.literal));
  return {
    allowedMethods: [
      ...new Set(
        candidates.filter((candidate) => candidate.literal === mostLiteral).map((candidate) => candidate.method),
      ),
    ],
  };
}
