import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { RegisteredOperation } from '../shared/operations/registry.js';
import type { Bundler } from './function-code.js';
import { MembershipServiceStack } from './membership-service-stack.js';

/** Default stack name (context `stackName` overrides it, e.g. one stack per stage). */
const DEFAULT_STACK_NAME = 'MembershipService';

/** Options of {@link createMembershipApp}. */
export interface MembershipAppOptions {
  /** Context values (tests pass `cdk.json`'s; the CLI passes them through the environment). */
  readonly context?: Record<string, unknown>;
  /** Cloud assembly directory. @default the CLI's, or a temporary directory */
  readonly outdir?: string;
  /** Run the cdk-nag AWS Solutions checks. @default true */
  readonly nag?: boolean;
  /** The operations the REST API serves. @default the registry's `OPERATIONS` */
  readonly operations?: readonly RegisteredOperation[];
  /** Builds each Lambda bundle. @default esbuild */
  readonly bundler?: Bundler;
}

/**
 * Builds the CDK app (context values: `stackName`, `scheduleGroupName`, `alarmEmail`, `alarmTopicArn`,
 * `billingWebhookSecretArn`, `mailFrom`): one environment-agnostic {@link MembershipServiceStack} with its nested route
 * stacks (no account or region lookups, so synthesis works offline) checked by cdk-nag's AWS
 * Solutions pack.
 * `bin/app.ts` synthesizes it; the infrastructure tests build it the same way.
 */
export function createMembershipApp(options: MembershipAppOptions = {}): { app: App; stack: MembershipServiceStack } {
  const app = new App({ context: options.context, outdir: options.outdir });
  const stackName = (app.node.tryGetContext('stackName') as string | undefined) ?? DEFAULT_STACK_NAME;
  const stack = new MembershipServiceStack(app, stackName, {
    description: 'Membership service: REST API, MCP tool server and signed webhooks',
    scheduleGroupName: app.node.tryGetContext('scheduleGroupName') as string | undefined,
    // Alarm notifications (DESIGN D23): `cdk deploy -c alarmEmail=ops@example.com` or `-c
    // alarmTopicArn=arn:aws:sns:...`.
    alarmEmail: app.node.tryGetContext('alarmEmail') as string | undefined,
    alarmTopicArn: app.node.tryGetContext('alarmTopicArn') as string | undefined,
    // The operator's billing webhook signing secret (DESIGN D20): `-c
    // billingWebhookSecretArn=arn:aws:secretsmanager:...` uses an existing secret.
    billingWebhookSecretArn: app.node.tryGetContext('billingWebhookSecretArn') as string | undefined,
    // The SES-verified sender of e-mail to subscribers (DESIGN D32): `-c mailFrom=members@example.com`; empty: none.
    mailFrom: app.node.tryGetContext('mailFrom') as string | undefined,
    operations: options.operations,
    bundler: options.bundler,
  });
  if (options.nag !== false) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}
