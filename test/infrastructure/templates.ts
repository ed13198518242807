import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NestedStack, Stack } from 'aws-cdk-lib';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import { createMembershipApp } from '../../lib/app.js';
import type { BundleEntry } from '../../lib/function-code.js';
import type { MembershipServiceStack } from '../../lib/membership-service-stack.js';

/** Most resources the project allows one template, root or nested (CloudFormation's limit is 500; DESIGN D23). */
export const MAX_RESOURCES_PER_TEMPLATE = 400;

/** A resource of a synthesized CloudFormation template (the fields the tests read). */
export type CfnResource = {
  Type: string;
  Properties?: any;
  DeletionPolicy?: string;
  DependsOn?: string[];
  Metadata?: any;
};

/** A synthesized CloudFormation template: its resources, parameters and outputs. */
export type CfnTemplate = {
  Resources: Record<string, CfnResource>;
  Parameters?: Record<string, unknown>;
  Outputs?: Record<string, any>;
};

/** One synthesized CloudFormation template: the root stack's or a nested stack's. */
export interface SynthesizedTemplate {
  /** Construct path of the stack. */
  readonly path: string;
  /** The stack construct. */
  readonly stack: Stack;
  /** The template as synthesized. */
  readonly template: CfnTemplate;
  /** True for a nested stack. */
  readonly nested: boolean;
}

/** Every template of a root stack and the nested stacks under it, plus a flattened view. */
export interface SynthesizedTemplates {
  readonly templates: readonly SynthesizedTemplate[];
  /**
   * The resources of all templates under their logical ids, with each nested template's parameter
   * references (`{ Ref: 'TableArn' }`) replaced by what the parent passes for them (`{ 'Fn::GetAtt':
   * ['MainTable', 'Arn'] }`), so assertions can follow references across stacks as in one template.
   * Throws if two templates use the same logical id.
   */
  readonly resources: Record<string, CfnResource>;
}

/** Replaces `{ Ref: <parameter> }` anywhere in `value` by `parameters[<parameter>]`. */
function substitute(value: unknown, parameters: Record<string, unknown>): unknown {
  if (Array.isArray(value)) return value.map((item) => substitute(item, parameters));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    if (
      entries.length === 1 &&
      entries[0][0] === 'Ref' &&
      typeof entries[0][1] === 'string' &&
      entries[0][1] in parameters
    ) {
      return parameters[entries[0][1]];
    }
    return Object.fromEntries(entries.map(([key, item]) => [key, substitute(item, parameters)]));
  }
  return value;
}

/** Reads the root stack's template and every nested stack's template from a synthesized assembly. */
export function synthesizedTemplates(assembly: CloudAssembly, root: Stack): SynthesizedTemplates {
  const rootTemplate = assembly.getStackArtifact(root.artifactId).template as CfnTemplate;
  const templates: SynthesizedTemplate[] = [
    { path: root.node.path, stack: root, template: rootTemplate, nested: false },
  ];
  const resources: Record<string, CfnResource> = { ...rootTemplate.Resources };
  for (const nested of root.node.findAll().filter((c): c is NestedStack => c instanceof NestedStack)) {
    const parentStack = Stack.of(nested.node.scope!);
    if (parentStack !== root) throw new Error(`${nested.node.path}: only one level of nesting is supported`);
    const template = JSON.parse(
      readFileSync(path.join(assembly.directory, nested.templateFile), 'utf8'),
    ) as CfnTemplate;
    const logicalId = root.resolve(nested.nestedStackResource!.logicalId) as string;
    const parentResource = rootTemplate.Resources[logicalId];
    if (parentResource?.Type !== 'AWS::CloudFormation::Stack')
      throw new Error(`${nested.node.path}: no stack resource ${logicalId}`);
    const parameters = (parentResource.Properties?.Parameters ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(template.Parameters ?? {})) {
      if (!(name in parameters)) throw new Error(`${nested.node.path}: parameter ${name} is not passed by the parent`);
    }
    templates.push({ path: nested.node.path, stack: nested, template, nested: true });
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (id in resources) throw new Error(`Logical id ${id} is used by two templates`);
      resources[id] = substitute(resource, parameters) as CfnResource;
    }
  }
  return { templates, resources };
}

/** The project root (cdk.json, cdk.out/). */
const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * A bundler that writes a one-line handler per entry instead of running esbuild, so a synth takes seconds:
 * for tests of the stack's resources, not of its bundles.
 */
export function stubBundler(entry: BundleEntry, outputDir: string): void {
  writeFileSync(
    path.join(outputDir, `${entry.name}.mjs`),
    `export const handler = async () => ({ statusCode: 204 }); // ${entry.name}\n`,
  );
}

/** What {@link synthesizeWithStubBundles} made: the root stack, every template, and its output directory. */
export interface StubSynthesis extends SynthesizedTemplates {
  stack: MembershipServiceStack;
  outdir: string;
}

/**
 * The syntheses of this worker by context (JSON of the merged context). The infrastructure project shares one module
 * graph per worker, so files asking for the same context read one synthesis: the constructs and templates are only
 * read.
 */
const syntheses = new Map<string, StubSynthesis>();

/**
 * Synthesizes the app (cdk.json's context, then `extraContext`) with {@link stubBundler} into a fresh directory under
 * the run's STUB_SYNTHESIS_ROOT (test/infrastructure/global-setup.ts removes it), or returns this worker's synthesis of
 * the same context; cdk-nag runs and throws on unacknowledged findings.
 */
export function synthesizeWithStubBundles(extraContext: Record<string, unknown> = {}): StubSynthesis {
  const context = {
    ...(JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'cdk.json'), 'utf8')).context as Record<string, unknown>),
    ...extraContext,
  };
  const key = JSON.stringify(context);
  const existing = syntheses.get(key);
  if (existing) return existing;
  const root = process.env.STUB_SYNTHESIS_ROOT;
  if (!root) throw new Error('STUB_SYNTHESIS_ROOT is not set: run the infrastructure tests through vitest');
  const outdir = mkdtempSync(path.join(root, 'stub-'));
  const built = createMembershipApp({ context, outdir, bundler: stubBundler });
  const synthesis = { stack: built.stack, outdir, ...synthesizedTemplates(built.app.synth(), built.stack) };
  syntheses.set(key, synthesis);
  return synthesis;
}
