import { RemovalPolicy } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** HTTP API access-log line: one JSON object per request, HTTP API `$context` variables only. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    userAgent: '$context.identity.userAgent',
    requestTime: '$context.requestTime',
    routeKey: '$context.routeKey',
    path: '$context.path',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationError: '$context.integrationErrorMessage',
  }),
);

/** Properties of {@link AccessLoggedHttpApi}. */
export interface AccessLoggedHttpApiProps {
  /** Description of the API. */
  readonly description: string;
}

/**
 * An API Gateway HTTP API with an auto-deployed `$default` stage that writes JSON access logs to
 * its own log group. No CORS configuration and no authorizer: the Lambdas behind it authenticate
 * (DESIGN D2) and, for the tool server, answer CORS themselves (DESIGN D5).
 */
export class AccessLoggedHttpApi extends Construct {
  /** The HTTP API. */
  public readonly api: apigwv2.HttpApi;
  /** Its `$default` stage. */
  public readonly stage: apigwv2.HttpStage;
  /** Access logs of the stage. */
  public readonly accessLogs: logs.LogGroup;

  constructor(scope: Construct, id: string, props: AccessLoggedHttpApiProps) {
    super(scope, id);
    this.api = new apigwv2.HttpApi(this, 'Api', { description: props.description, createDefaultStage: false });
    this.accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      accessLogSettings: {
        destination: new apigwv2.LogGroupLogDestination(this.accessLogs),
        format: ACCESS_LOG_FORMAT,
      },
    });
  }

  /** `https://<api id>.execute-api.<region>.<suffix>` (no trailing slash). */
  public get endpoint(): string {
    return this.api.apiEndpoint;
  }
}
