import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { FunctionCode, type BundleEntry } from './function-code.js';

/** The Lambda runtime of every function of the service (DESIGN §3: Node.js 24). */
const NODE_RUNTIME: lambda.Runtime = lambda.Runtime.NODEJS_24_X;

/** `POWERTOOLS_SERVICE_NAME` of every function. */
const SERVICE_NAME = 'membership-service';

/** Properties of a {@link ServiceFunction}. */
export interface ServiceFunctionProps {
  /** Shared bundles; the function uses the one of {@link ServiceFunctionProps.entry}. */
  readonly code: FunctionCode;
  /** What the function runs: a `functions/<name>.ts` file or one REST operation. */
  readonly entry: BundleEntry;
  /** Human-readable description shown in the console. */
  readonly description: string;
  /** Function timeout. */
  readonly timeout: Duration;
  /** Environment variables (the common ones are added by the caller). */
  readonly environment: Record<string, string>;
  /** Memory in MB. @default 512 */
  readonly memorySize?: number;
  /** Reserved concurrent executions (a cap and a guarantee). @default none: the account's unreserved pool */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * One Lambda function of the service with the settings every function shares: Node.js 24 on ARM64, the esbuild bundle
 * of its entry, source maps, a dedicated log group with a retention period, active X-Ray tracing, and a dedicated role
 * whose only built-in permissions are writing to that log group and sending trace segments (no AWS managed policy, no
 * `logs:*` on `*`). Callers add least-privilege grants to {@link ServiceFunction.function}.
 */
export class ServiceFunction extends Construct {
  /** The Lambda function. */
  public readonly function: lambda.Function;
  /** Its execution role. */
  public readonly role: iam.Role;
  /** Its log group (one month retention). */
  public readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${props.description}`,
    });
    this.logGroup.grantWrite(this.role);
    Validations.of(this.role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'xray:PutTraceSegments and xray:PutTelemetryRecords (active tracing) have no resource-level permissions; for the fan-out also dynamodb:ListStreams (its stream event source). Every other action is scoped.',
    });
    this.function = new lambda.Function(this, 'Function', {
      runtime: NODE_RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      code: props.code.code(props.entry),
      handler: FunctionCode.handler(props.entry),
      description: props.description,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout,
      role: this.role,
      logGroup: this.logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      // X-Ray (DESIGN D23): Lambda records each invocation; the functions that bundle Powertools Tracer
      // add subsegments for their AWS SDK calls (`shared/aws/tracing.ts`).
      tracing: lambda.Tracing.ACTIVE,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        ...props.environment,
      },
    });
  }
}
