import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { routeWithoutAuthorizer } from './http-api.js';
import { Construct } from 'constructs';
import { credentialKeyActions } from '../shared/credentials/usage.js';
import { UNSUBSCRIBE_PATH } from '../shared/domain/messages/paths.js';
import { JOIN_PATH, PORTAL_PATH } from '../shared/public-pages/http.js';
import { fileEntry, type FunctionCode } from './function-code.js';
import { tableActions } from './route-stack.js';
import { ServiceFunction } from './service-function.js';
import type { MembershipTables } from './tables.js';
import { grantSendToQueues, type PipelineQueues } from './queues.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../shared/limits/idempotency.js';

/** Properties of {@link PublicPages}. */
export interface PublicPagesProps {
  /** The REST API's HTTP API: the pages live under its `/join` and `/portal` paths and at `/messages/unsubscribe`. */
  readonly httpApi: apigwv2.IHttpApi;
  /** Shared function bundles (uses the `public-pages` bundle). */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The pipeline's queues (the operations a join or a portal action runs emit events and send messages). */
  readonly queues: PipelineQueues;
  /** The key of stored credentials: a paid join opens the project's Stripe key to create the Checkout Session. */
  readonly credentialsKey: kms.IKey;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
}

/**
 * The public pages (DESIGN D26, D27, D32): the join pages, the subscriber portal and the unsubscribe page, one Lambda
 * behind the REST API with routes `ANY /join/{proxy+}`, `ANY /portal/{proxy+}` and `ANY /messages/unsubscribe`. It runs
 * the join's and the portal's operations, so it may use both tables with keyed operations and queries (no Scan, no
 * BatchWriteItem), send to the delivery queue and open stored credentials (Stripe Checkout and Billing Portal
 * sessions). No authorizer: the pages are public, rate-limited per IP and CSRF-protected by the Lambda itself.
 */
export class PublicPages extends Construct {
  /** The public pages' Lambda. */
  public readonly function: lambda.Function;

  constructor(scope: Construct, id: string, props: PublicPagesProps) {
    super(scope, id);
    this.function = new ServiceFunction(this, 'Pages', {
      code: props.code,
      entry: fileEntry('public-pages'),
      description: 'Public pages: join pages, checkout, welcome page and the subscriber portal',
      timeout: Duration.seconds(IDEMPOTENCY_LOCK_SECONDS),
      environment: props.environment,
    }).function;
    props.tables.table.grant(this.function, ...tableActions('readWriteDelete'));
    grantSendToQueues(props.queues, this.function);
    props.credentialsKey.grant(this.function, ...credentialKeyActions('open'));
    const integration = new HttpLambdaIntegration('PagesIntegration', this.function);
    for (const [routeId, path] of [
      ['JoinRoute', `${JOIN_PATH}/{proxy+}`],
      ['PortalRoute', `${PORTAL_PATH}/{proxy+}`],
      ['UnsubscribeRoute', UNSUBSCRIBE_PATH],
    ] as const) {
      routeWithoutAuthorizer(this, routeId, {
        httpApi: props.httpApi,
        routeKey: apigwv2.HttpRouteKey.with(path, apigwv2.HttpMethod.ANY),
        integration,
        reason:
          'Public by nature (DESIGN D26, D27, D32): a fan joins without an account; the Lambda rate-limits per IP, checks CSRF tokens on every form (but the RFC 8058 one-click unsubscribe, whose secret token is the credential), and the portal accepts only its one-time link and session cookie.',
      });
    }
  }
}
