/**
 * The operator billing hook's signing secret on AWS (DESIGN D20, D16 storage
 * rules), as CDK assertions on the synthesized stack: a Secrets Manager secret the stack creates (or an existing
 * one from context `billingWebhookSecretArn`), readable (`GetSecretValue` only) by the billing hook's role and
 * no other, whose ARN — never a value — is in that function's environment and in the `BillingWebhookSecretArn`
 * output. Bundling is stubbed as in `operations.test.ts`; cdk-nag runs and throws on unacknowledged findings.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createMembershipApp } from '../../lib/app.js';
import { BILLING_WEBHOOK_SECRET_READ_ACTIONS } from '../../lib/billing-webhook-secret.js';
import { ENVIRONMENT_VARIABLES } from '../../shared/config.js';
import { BILLING_STRIPE_HOOK_ROUTE } from '../../shared/hooks/routes.js';
import { synthesizeWithStubBundles, type CfnResource, type StubSynthesis } from './templates.js';

type Statement = { Effect: string; Action?: string | string[]; Resource?: unknown };

const EXISTING_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:operator/billing-whsec-AbC123';
const BILLING_HOOK_HANDLER = `${BILLING_STRIPE_HOOK_ROUTE.functionFile}.handler`;
/** Anything shaped like a real Stripe signing secret (descriptions may say `whsec_...`). */
const SIGNING_SECRET_TEXT = /whsec_[A-Za-z0-9+/=]{8,}/;

type Synthesized = StubSynthesis;

let created: Synthesized;
let existing: Synthesized;

beforeAll(() => {
  created = synthesizeWithStubBundles();
  existing = synthesizeWithStubBundles({ billingWebhookSecretArn: EXISTING_SECRET_ARN });
}, 600_000); // two synths: minutes on a loaded 2-core machine

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const refId = (value: any): string => value?.Ref ?? value?.['Fn::GetAtt']?.[0];
const ofType = (resources: Record<string, CfnResource>, type: string): [string, CfnResource][] =>
  Object.entries(resources).filter(([, r]) => r.Type === type);
const rootOutputs = (synthesized: Synthesized): Record<string, any> =>
  synthesized.templates.find((t) => !t.nested)!.template.Outputs!;

/** The function whose handler is `handler` (exactly one). */
function functionWithHandler(resources: Record<string, CfnResource>, handler: string): [string, CfnResource] {
  const found = ofType(resources, 'AWS::Lambda::Function').filter(([, fn]) => fn.Properties.Handler === handler);
  expect(found, handler).toHaveLength(1);
  return found[0];
}

/** Every IAM policy statement with the role it is attached to (by logical id). */
function statementsByRole(resources: Record<string, CfnResource>): { roleId: string; statement: Statement }[] {
  return ofType(resources, 'AWS::IAM::Policy').flatMap(([, policy]) =>
    asArray<any>(policy.Properties.Roles).flatMap((role) =>
      asArray<Statement>(policy.Properties.PolicyDocument.Statement).map((statement) => ({
        roleId: refId(role),
        statement,
      })),
    ),
  );
}

/** The statements that allow any Secrets Manager action, or name `secretResource` as a resource. */
function secretStatements(
  resources: Record<string, CfnResource>,
  secretResource: unknown,
): { roleId: string; statement: Statement }[] {
  const named = JSON.stringify(secretResource);
  return statementsByRole(resources).filter(
    ({ statement }) =>
      asArray(statement.Action).some((action) => action.startsWith('secretsmanager:')) ||
      asArray(statement.Resource).some((resource) => JSON.stringify(resource) === named),
  );
}

describe('the billing webhook secret the stack creates (DESIGN D20, D16)', () => {
  it('is one Secrets Manager secret holding a generated placeholder, no value in the template, and no resource policy', () => {
    const secrets = ofType(created.resources, 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    const [, secret] = secrets[0];
    expect(secret.Properties.SecretString).toBeUndefined();
    expect(secret.Properties.GenerateSecretString).toBeDefined();
    expect(secret.DeletionPolicy).toBe('Delete');
    expect(ofType(created.resources, 'AWS::SecretsManager::ResourcePolicy')).toEqual([]);
    expect(ofType(created.resources, 'AWS::SecretsManager::RotationSchedule')).toEqual([]);
  });

  it('lets only the billing hook’s role read it, with GetSecretValue on that secret alone', () => {
    const [secretId] = ofType(created.resources, 'AWS::SecretsManager::Secret')[0];
    const [, hook] = functionWithHandler(created.resources, BILLING_HOOK_HANDLER);
    const statements = secretStatements(created.resources, { Ref: secretId });
    expect(statements.map(({ roleId }) => roleId)).toEqual([refId(hook.Properties.Role)]);
    expect(BILLING_WEBHOOK_SECRET_READ_ACTIONS).toEqual(['secretsmanager:GetSecretValue']);
    expect(statements[0].statement).toEqual({
      Effect: 'Allow',
      Action: 'secretsmanager:GetSecretValue',
      Resource: { Ref: secretId },
    });
  });

  it('puts its ARN, not a value, in the billing hook’s environment only; no function gets the value variable', () => {
    const [secretId] = ofType(created.resources, 'AWS::SecretsManager::Secret')[0];
    const [hookId] = functionWithHandler(created.resources, BILLING_HOOK_HANDLER);
    const functions = ofType(created.resources, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(3);
    for (const [id, fn] of functions) {
      const variables = fn.Properties.Environment.Variables as Record<string, unknown>;
      expect(variables[ENVIRONMENT_VARIABLES.billingStripeWebhookSecret], id).toBeUndefined();
      expect(variables[ENVIRONMENT_VARIABLES.billingStripeWebhookSecretArn], id).toEqual(
        id === hookId ? { Ref: secretId } : undefined,
      );
    }
  });

  it('names it in the BillingWebhookSecretArn output, and no template holds anything shaped like a signing secret', () => {
    const [secretId] = ofType(created.resources, 'AWS::SecretsManager::Secret')[0];
    const output = rootOutputs(created).BillingWebhookSecretArn;
    expect(output.Value).toEqual({ Ref: secretId });
    expect(output.Description).toContain('put-secret-value');
    for (const { path: where, template } of created.templates)
      expect(JSON.stringify(template), where).not.toMatch(SIGNING_SECRET_TEXT);
  });
});

describe('an existing billing webhook secret (context billingWebhookSecretArn)', () => {
  it('creates no secret; the billing hook alone may GetSecretValue on that ARN, which is in its environment and the output', () => {
    expect(ofType(existing.resources, 'AWS::SecretsManager::Secret')).toEqual([]);
    const [hookId, hook] = functionWithHandler(existing.resources, BILLING_HOOK_HANDLER);
    const statements = secretStatements(existing.resources, EXISTING_SECRET_ARN);
    expect(statements.map(({ roleId }) => roleId)).toEqual([refId(hook.Properties.Role)]);
    expect(statements[0].statement).toEqual({
      Effect: 'Allow',
      Action: 'secretsmanager:GetSecretValue',
      Resource: EXISTING_SECRET_ARN,
    });
    for (const [id, fn] of ofType(existing.resources, 'AWS::Lambda::Function')) {
      expect(fn.Properties.Environment.Variables[ENVIRONMENT_VARIABLES.billingStripeWebhookSecretArn], id).toEqual(
        id === hookId ? EXISTING_SECRET_ARN : undefined,
      );
    }
    expect(rootOutputs(existing).BillingWebhookSecretArn.Value).toBe(EXISTING_SECRET_ARN);
  });

  it('refuses anything but a complete secret ARN, without repeating the value (it may be the signing secret itself)', () => {
    const build = (value: string) => () =>
      createMembershipApp({ context: { billingWebhookSecretArn: value }, nag: false, bundler: () => undefined });
    const pasted = 'whsec_AbCdEfGh0123456789';
    let message = '';
    try {
      build(pasted)();
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/complete ARN of a Secrets Manager secret/);
    expect(message).not.toContain(pasted);
    // A partial ARN (no 6-character suffix) would be granted an ARN that matches no secret.
    expect(build('arn:aws:secretsmanager:eu-west-1:123456789012:secret:billing')).toThrow(/complete ARN/);
    expect(build('operator/billing-whsec')).toThrow(/complete ARN/);
  });
});
