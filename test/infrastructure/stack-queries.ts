import { DASHBOARD_AREAS } from '../../shared/dashboard/areas.js';
import { beforeAll, expect } from 'vitest';
import {
  synthesizeWithStubBundles,
  type CfnResource,
  type CfnTemplate,
  type StubSynthesis,
  type SynthesizedTemplate,
  type SynthesizedTemplates,
} from './templates.js';
import { routeKey, type RegisteredOperation } from '../../shared/operations/registry.js';
import { HOOK_ROUTES } from '../../shared/hooks/routes.js';
import { UNSUBSCRIBE_PATH } from '../../shared/domain/messages/paths.js';

/** One statement of an IAM policy document. */
export type Statement = {
  Effect: string;
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Principal?: any;
  Condition?: any;
};

/** A CloudFormation value that may be one item or a list, as a list. */
export const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];

/** The logical id a `Ref` or `Fn::GetAtt` points at. */
export const refId = (value: any): string => value?.Ref ?? value?.['Fn::GetAtt']?.[0];

/** Logging and tracing actions every function may have (CloudWatch Logs, X-Ray). */
export const isBaselineAction = (action: string): boolean => action.startsWith('logs:') || action.startsWith('xray:');

/** The actions of some statements. */
export const actionsOf = (statements: Statement[]): string[] => statements.flatMap((s) => asArray(s.Action));

/**
 * Queries over one synthesis, read through `synthesis()` when called (the synthesis is made in `beforeAll`): the
 * resources of every template with nested-stack parameters resolved, functions, roles and their statements, routes.
 */
export function stackQueries(synthesis: () => SynthesizedTemplates) {
  const resources = () => synthesis().resources;
  const rootTemplate = () => synthesis().templates[0].template;
  const ofType = (type: string): [string, CfnResource][] =>
    Object.entries(resources()).filter(([, r]) => r.Type === type);
  const functionsWithHandler = (handler: string): [string, CfnResource][] =>
    ofType('AWS::Lambda::Function').filter(([, f]) => f.Properties.Handler === handler);

  /** Every statement an IAM role is granted: inline, attached `AWS::IAM::Policy`, managed (must be none). */
  function statementsOfRole(roleId: string): Statement[] {
    const role = resources()[roleId];
    expect(role?.Type).toBe('AWS::IAM::Role');
    expect(role.Properties.ManagedPolicyArns ?? []).toEqual([]);
    const inline = asArray<any>(role.Properties.Policies).flatMap((policy) =>
      asArray<Statement>(policy.PolicyDocument.Statement),
    );
    const attached = ofType('AWS::IAM::Policy')
      .filter(([, policy]) => asArray<any>(policy.Properties.Roles).some((role) => refId(role) === roleId))
      .flatMap(([, policy]) => asArray<Statement>(policy.Properties.PolicyDocument.Statement));
    return [...inline, ...attached];
  }

  /** Roles that EventBridge Scheduler may assume. */
  const schedulerRoles = (): [string, CfnResource][] =>
    ofType('AWS::IAM::Role').filter(([, role]) =>
      asArray<Statement>(role.Properties.AssumeRolePolicyDocument.Statement).some(
        (s) => s.Principal?.Service === 'scheduler.amazonaws.com',
      ),
    );

  const restApiId = (): string => refId(rootTemplate().Outputs!.RestApiUrl.Value);

  return {
    ofType,
    functionsWithHandler,
    statementsOfRole,
    schedulerRoles,
    restApiId,
    /** The logical id of the credentials key (the only KMS key). */
    credentialsKeyId: (): string => ofType('AWS::KMS::Key')[0][0],
    /** The one function with this handler (fails the test if there are none or several). */
    onlyFunction: (handler: string): [string, CfnResource] => {
      const found = functionsWithHandler(handler);
      expect(found, handler).toHaveLength(1);
      return found[0];
    },
    statementsOfFunction: (functionId: string): Statement[] =>
      statementsOfRole(refId(resources()[functionId].Properties.Role)),
    /** The Lambda function behind an HTTP API route (route → integration → function). */
    functionOfRoute: (route: CfnResource): string => {
      const target = route.Properties.Target['Fn::Join'][1];
      expect(target[0]).toBe('integrations/');
      const integration = resources()[refId(target[1])];
      expect(integration.Type).toBe('AWS::ApiGatewayV2::Integration');
      expect(integration.Properties.IntegrationType).toBe('AWS_PROXY');
      return refId(integration.Properties.IntegrationUri);
    },
    /** The role EventBridge Scheduler assumes for webhook retry timers: the one scoped to the retry schedule group. */
    retrySchedulerRole: (): [string, CfnResource] => {
      const roles = schedulerRoles().filter(([, role]) =>
        JSON.stringify(role.Properties.AssumeRolePolicyDocument).includes('ArnEquals'),
      );
      expect(roles).toHaveLength(1);
      return roles[0];
    },
    /** The routes of the REST API (not the tool server's API). */
    restRoutes: (): [string, CfnResource][] =>
      ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => refId(r.Properties.ApiId) === restApiId()),
  };
}

/**
 * Synthesizes the app with stub bundles before the calling file's tests (or reuses this worker's synthesis of
 * cdk.json's context), and gives the synthesis's templates (`resources`, `rootTemplate`, `templates`, read after
 * `beforeAll`) with {@link stackQueries}.
 */
export function useStubSynthesis() {
  let synthesized: StubSynthesis;
  // Seconds alone, minutes on a loaded 2-core machine: a hook timeout of its own.
  beforeAll(() => {
    synthesized = synthesizeWithStubBundles();
  }, 600_000);
  return {
    ...stackQueries(() => synthesized),
    /** Resources of all templates, nested-stack parameters resolved to the root's values. */
    resources: (): Record<string, CfnResource> => synthesized.resources,
    /** The root template. */
    rootTemplate: (): CfnTemplate => synthesized.templates[0].template,
    /** The root template and every nested stack's. */
    templates: (): readonly SynthesizedTemplate[] => synthesized.templates,
  };
}

/** Expects a role that only EventBridge Scheduler of this account may assume. */
export function expectSchedulerTrust(role: CfnResource): void {
  const trust = asArray<Statement>(role.Properties.AssumeRolePolicyDocument.Statement);
  expect(trust).toHaveLength(1);
  expect(trust[0]).toMatchObject({
    Effect: 'Allow',
    Action: 'sts:AssumeRole',
    Principal: { Service: 'scheduler.amazonaws.com' },
  });
  expect(trust[0].Condition.StringEquals['aws:SourceAccount']).toEqual({ Ref: 'AWS::AccountId' });
}

/** The route keys the REST API must have for these operations: theirs, the hooks', `$default` and the HTML pages'. */
export const expectedRouteKeys = (operations: readonly RegisteredOperation[]): string[] =>
  [
    ...operations.map(routeKey),
    ...HOOK_ROUTES.map((hook) => `${hook.method} ${hook.path}`),
    '$default',
    ...DASHBOARD_AREAS.flatMap((area) =>
      area.paths.flatMap((path) => [`ANY /dashboard${path}`, `ANY /dashboard${path}/{proxy+}`]),
    ),
    'ANY /join/{proxy+}',
    'ANY /portal/{proxy+}',
    `ANY ${UNSUBSCRIBE_PATH}`,
  ].sort();
