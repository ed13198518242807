import { DASHBOARD_AREAS } from '../../shared/dashboard/areas.js';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMembershipApp } from '../../lib/app.js';
import { FUNCTION_FILES, type BundleEntry } from '../../lib/function-code.js';
import type { MembershipServiceStack } from '../../lib/membership-service-stack.js';
import { MAX_ROUTES_PER_STACK, groupRoutes } from '../../lib/rest-api.js';
import { routeKey, type RegisteredOperation } from '../../shared/operations/registry.js';
import {
  MAX_RESOURCES_PER_TEMPLATE,
  stubBundler,
  synthesizedTemplates,
  type CfnResource,
  type SynthesizedTemplate,
} from './templates.js';
import { expectedRouteKeys } from './stack-queries.js';

/**
 * DESIGN D23 at scale: the stack synthesized with a generated list of 150 operations spread over 10
 * modules (one of them larger than a nested stack may hold) keeps every template at or below 400
 * resources and still gives every operation exactly one route and one Lambda. Bundling is stubbed
 * (the bundle content does not matter here), so the test runs no esbuild.
 */

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Routes per generated module: 150 in all; the first module needs two nested stacks. */
const MODULE_SIZES = [45, 20, 15, 15, 12, 12, 10, 9, 7, 5];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE'] as const;

/** A generated operation (only the fields `lib/` reads matter). */
function fakeOperation(moduleIndex: number, index: number): RegisteredOperation {
  const module = `fake-things-${moduleIndex + 1}`;
  const method = METHODS[index % METHODS.length];
  const resource = `/v1/${module}/group-${Math.floor(index / METHODS.length)}`;
  return {
    id: `${method.toLowerCase()}FakeThing${moduleIndex + 1}x${index}`,
    module,
    summary: `Generated operation ${index} of ${module}`,
    tag: module,
    // A few public operations, like the two documents; the rest need an ability.
    ability: moduleIndex === 0 && index < 2 ? null : method === 'GET' ? 'project:view' : 'project:update',
    teamWide: false,
    events: [],
    rest: {
      method,
      path: index % 2 === 0 ? resource : `${resource}/{thing_id}`,
      successStatus: method === 'POST' ? 201 : 200,
    },
  } as unknown as RegisteredOperation;
}

const GENERATED: readonly RegisteredOperation[] = MODULE_SIZES.flatMap((size, moduleIndex) =>
  Array.from({ length: size }, (_, index) => fakeOperation(moduleIndex, index)),
);

let outdir: string;
let assembly: CloudAssembly;
let stack: MembershipServiceStack;
let templates: readonly SynthesizedTemplate[];
let resources: Record<string, CfnResource>;
const bundled: string[] = [];

const refId = (value: any): string => value?.Ref ?? value?.['Fn::GetAtt']?.[0];

beforeAll(() => {
  const context = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context as Record<
    string,
    unknown
  >;
  mkdirSync(path.join(PROJECT_ROOT, 'cdk.out'), { recursive: true });
  outdir = mkdtempSync(path.join(PROJECT_ROOT, 'cdk.out', 'test-scale-'));
  const built = createMembershipApp({
    context,
    outdir,
    operations: GENERATED,
    bundler: function recordingStubBundler(entry: BundleEntry, outputDir: string): void {
      bundled.push(entry.name);
      stubBundler(entry, outputDir);
    },
  });
  stack = built.stack;
  assembly = built.app.synth(); // cdk-nag runs at this scale too
  ({ templates, resources } = synthesizedTemplates(assembly, stack));
}, 600_000); // a 150-route synth with cdk-nag: minutes on a loaded 2-core machine

afterAll(() => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
});

describe('150 generated routes', () => {
  it('generates 150 distinct operations over 10 modules', () => {
    expect(GENERATED).toHaveLength(150);
    expect(new Set(GENERATED.map((o) => o.id)).size).toBe(150);
    expect(new Set(GENERATED.map(routeKey)).size).toBe(150);
  });

  it(`keeps every template (root and nested) at or below ${MAX_RESOURCES_PER_TEMPLATE} resources`, () => {
    const counts = templates.map((t) => ({ stack: t.path, resources: Object.keys(t.template.Resources).length }));
    console.info('resources per template (150 routes):', JSON.stringify(counts));
    for (const { stack: where, resources: count } of counts)
      expect(count, where).toBeLessThanOrEqual(MAX_RESOURCES_PER_TEMPLATE);
  });

  it('splits the routes into one nested stack per module, a large module into parts', () => {
    const nested = templates
      .filter((t) => t.nested)
      .map((t) => t.path.split('/').pop())
      .sort();
    expect(nested).toEqual(
      [
        'FakeThings1Routes',
        'FakeThings1Routes2',
        ...MODULE_SIZES.slice(1).map((_, i) => `FakeThings${i + 2}Routes`),
      ].sort(),
    );
    const first = templates.find((t) => t.path.endsWith('/FakeThings1Routes'))!;
    const second = templates.find((t) => t.path.endsWith('/FakeThings1Routes2'))!;
    const routesOf = (t: SynthesizedTemplate): number =>
      Object.values(t.template.Resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route').length;
    expect(routesOf(first)).toBe(MAX_ROUTES_PER_STACK);
    expect(routesOf(second)).toBe(MODULE_SIZES[0] - MAX_ROUTES_PER_STACK);
  });

  it('gives every operation exactly one route, integrated with its own Lambda', () => {
    const apiId = refId(templates[0].template.Outputs!.RestApiUrl.Value);
    const routes = Object.values(resources).filter(
      (r) => r.Type === 'AWS::ApiGatewayV2::Route' && refId(r.Properties.ApiId) === apiId,
    );
    expect(routes.map((r) => r.Properties.RouteKey).sort()).toEqual(expectedRouteKeys(GENERATED));
    const functionIds = new Set<string>();
    for (const route of routes) {
      const integration = resources[refId(route.Properties.Target['Fn::Join'][1][1])];
      expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
      functionIds.add(refId(integration.Properties.IntegrationUri));
    }
    // Each dashboard area's routes share its Lambda; `/join`, `/portal` and the unsubscribe page share the public
    // pages'.
    const dashboardRoutes = DASHBOARD_AREAS.reduce((count, area) => count + 2 * area.paths.length, 0);
    expect(functionIds.size).toBe(routes.length - (dashboardRoutes - DASHBOARD_AREAS.length) - 2);
    const handlers = Object.values(resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => r.Properties.Handler)
      .sort();
    expect(handlers).toEqual(
      [...GENERATED.map((o) => `${o.id}.handler`), ...FUNCTION_FILES.map((f) => `${f}.handler`)].sort(),
    );
  });

  it('bundles each entry once', () => {
    expect(bundled.slice().sort()).toEqual([...GENERATED.map((o) => o.id), ...FUNCTION_FILES].sort());
  });
});

describe('groupRoutes', () => {
  it('keeps declaration order, so a module’s new operations join its last part', () => {
    const groups = groupRoutes(GENERATED);
    expect(groups.map((g) => g.operations.length)).toEqual([40, 5, ...MODULE_SIZES.slice(1)]);
    expect(groups.flatMap((g) => g.operations)).toEqual(GENERATED);
    const grown = groupRoutes([...GENERATED, fakeOperation(0, 45)]);
    expect(grown[0].operations).toEqual(groups[0].operations);
    expect(grown[1].operations.at(-1)!.id).toBe(fakeOperation(0, 45).id);
  });

  it('rejects duplicate operation ids and route keys', () => {
    expect(() => groupRoutes([GENERATED[0], GENERATED[0]])).toThrow(/Duplicate operation id/);
    expect(() => groupRoutes([GENERATED[0], { ...GENERATED[1], rest: GENERATED[0].rest }])).toThrow(/Duplicate route/);
  });
});
