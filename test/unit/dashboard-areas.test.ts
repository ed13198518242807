/**
 * The dashboard's areas (DESIGN D21, D23): every page's path reaches, by API Gateway's most specific route, the area
 * whose Lambda serves the page's route group, and each area's Lambda entry serves exactly its groups.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DASHBOARD_AREAS, type DashboardArea } from '../../shared/dashboard/areas.js';
import { PROJECT_ROUTES } from '../../shared/dashboard/routes/projects.js';
import type { DashboardRoute } from '../../shared/dashboard/routes/route.js';
import { SIGN_IN_ROUTES } from '../../shared/dashboard/routes/sign-in.js';
import { TEAM_ROUTES } from '../../shared/dashboard/routes/team.js';
import { WEBHOOK_ROUTES } from '../../shared/dashboard/routes/webhooks.js';

/** Each area's route groups, by the name its Lambda entry imports them by. */
const GROUPS: Record<DashboardArea['functionFile'], Record<string, DashboardRoute[]>> = {
  dashboard: { TEAM_ROUTES, WEBHOOK_ROUTES },
  'dashboard-projects': { PROJECT_ROUTES },
  'dashboard-sign-in': { SIGN_IN_ROUTES },
};

/** The area API Gateway sends `path` (under `/dashboard`) to: its longest matching route, exact or `/{proxy+}`. */
function areaOf(path: string): string | undefined {
  const candidates = DASHBOARD_AREAS.flatMap((area) =>
    area.paths.filter((prefix) => path === prefix || path.startsWith(`${prefix}/`)).map((prefix) => ({ area, prefix })),
  );
  return candidates.sort((a, b) => b.prefix.length - a.prefix.length)[0]?.area.functionFile;
}

describe('dashboard areas', () => {
  it('routes every page of a group to the area whose Lambda serves that group', () => {
    for (const [area, groups] of Object.entries(GROUPS))
      for (const route of Object.values(groups).flat())
        expect(areaOf(route.path.replace(/:\w+/g, 'x')), `${route.method} ${route.path}`).toBe(area);
    expect(areaOf('/assets/htmx.min.js')).toBe('dashboard');
  });

  it('gives each area a Lambda entry that imports exactly its route groups', () => {
    const all = Object.values(GROUPS).flatMap((groups) => Object.keys(groups));
    for (const { functionFile } of DASHBOARD_AREAS) {
      const source = readFileSync(new URL(`../../functions/${functionFile}.ts`, import.meta.url), 'utf8');
      const imported = all.filter((name) => new RegExp(`\\b${name}\\b`).test(source));
      expect(imported, functionFile).toEqual(Object.keys(GROUPS[functionFile]));
    }
  });
});
