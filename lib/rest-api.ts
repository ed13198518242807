import { Duration } from 'aws-cdk-lib';
import * as apigwv2 from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { BillingWebhookSecret } from './billing-webhook-secret.js';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { ENVIRONMENT_VARIABLES } from '../shared/config.js';
import { credentialKeyActions } from '../shared/credentials/usage.js';
import { HOOK_ROUTES } from '../shared/hooks/routes.js';
import { Construct } from 'constructs';
import { routeKey, type RegisteredOperation } from '../shared/operations/registry.js';
import { fileEntry, type FunctionCode } from './function-code.js';
import { Dashboard } from './dashboard.js';
import { PublicPages } from './public-pages.js';
import { AccessLoggedHttpApi, routeWithoutAuthorizer } from './http-api.js';
import { RouteStack, pascalCase } from './route-stack.js';
import { ServiceFunction } from './service-function.js';
import { tableActions } from './route-stack.js';
import type { MembershipTables } from './tables.js';
import type { PipelineQueues } from './queues.js';

/**
 * Most REST routes one nested stack holds (DESIGN D23). A route costs 9 resources (function, role,
 * policy, log group, integration, permission, route, its errors and throttles alarms), so 40 routes are
 * 360 resources, below the 500-resource CloudFormation limit and the 400 this project allows itself.
 */
export const MAX_ROUTES_PER_STACK = 40;

/** The operations of one nested route stack. */
export interface RouteGroup {
  /** Construct id of the nested stack: `<Module>Routes`, then `<Module>Routes2`, `<Module>Routes3`, ... */
  readonly id: string;
  /** The module folder. */
  readonly module: string;
  /** 1-based part number within the module, and how many parts the module has. */
  readonly part: number;
  readonly parts: number;
  readonly operations: readonly RegisteredOperation[];
}

/**
 * Splits the operations into nested-stack groups: one per object module, a module with more than
 * `maxPerStack` operations into consecutive parts of at most `maxPerStack`, in declaration order (so
 * a module's new operations, appended to its definitions, join its last part and existing routes stay
 * where they are: moving a route between nested stacks would replace it). Throws on a duplicate
 * operation id or route key.
 */
export function groupRoutes(
  operations: readonly RegisteredOperation[],
  maxPerStack: number = MAX_ROUTES_PER_STACK,
): RouteGroup[] {
  const ids = new Set<string>();
  const keys = new Set<string>();
  const byModule = new Map<string, RegisteredOperation[]>();
  for (const operation of operations) {
    if (ids.has(operation.id)) throw new Error(`Duplicate operation id ${operation.id}`);
    if (keys.has(routeKey(operation))) throw new Error(`Duplicate route ${routeKey(operation)} (${operation.id})`);
    ids.add(operation.id);
    keys.add(routeKey(operation));
    const list = byModule.get(operation.module) ?? [];
    list.push(operation);
    byModule.set(operation.module, list);
  }
  const groups: RouteGroup[] = [];
  for (const [module, list] of byModule) {
    const parts = Math.ceil(list.length / maxPerStack);
    for (let index = 0; index < parts; index++) {
      groups.push({
        id: `${pascalCase(module)}Routes${index === 0 ? '' : index + 1}`,
        module,
        part: index + 1,
        parts,
        operations: list.slice(index * maxPerStack, (index + 1) * maxPerStack),
      });
    }
  }
  return groups;
}

/** Properties of {@link RestApi}. */
export interface RestApiProps {
  /** The operations to serve, one route and one Lambda each. */
  readonly operations: readonly RegisteredOperation[];
  /** Function bundles (each route uses its operation's own bundle). */
  readonly code: FunctionCode;
  /** Both tables. */
  readonly tables: MembershipTables;
  /** The pipeline's queues. */
  readonly queues: PipelineQueues;
  /** Environment shared by every function of the service. */
  readonly environment: Record<string, string>;
  /** The credentials key (DESIGN D16): granted to the routes and hooks that open or seal credentials. */
  readonly credentialsKey: kms.IKey;
  /** The SES sender (context `mailFrom`), given to the routes whose operations send e-mail themselves. */
  readonly mailFrom?: string;
  /** The operator's billing webhook signing secret (DESIGN D20): readable by the billing hook's Lambda only. */
  readonly billingWebhookSecret: BillingWebhookSecret;
  /**
   * The service's public base URL, under which inbound hooks are registered with providers
   * (`PUBLIC_BASE_URL`). @default the HTTP API's own endpoint
   */
  readonly publicBaseUrl?: string;
}

/**
 * The REST API (`{base_url}`): an HTTP API with one route and one Lambda per operation, whose bundle
 * holds only that operation. The API, its stage and the `$default` route stay in this stack; the
 * routes and their Lambdas live in nested {@link RouteStack}s, one per object module (split past
 * {@link MAX_ROUTES_PER_STACK} routes), so no template nears CloudFormation's resource limit
 * (DESIGN D23). Construct ids derive from module folders and operation ids, so logical ids are stable.
 */
export class RestApi extends Construct {
  /** The HTTP API and its stage. */
  public readonly httpApi: AccessLoggedHttpApi;
  /** The nested stacks of routes, by construct id. */
  public readonly routeStacks: ReadonlyMap<string, RouteStack>;
  /** The Lambda of each route, by operation id. */
  public readonly functions: ReadonlyMap<string, lambda.Function>;
  /** The `$default` route's Lambda (unknown routes → problem documents). */
  public readonly unmatchedRouteFunction: lambda.Function;
  /** The dashboard at `/dashboard` (DESIGN D21). */
  public readonly dashboard: Dashboard;
  /** The join pages and the subscriber portal at `/join` and `/portal` (DESIGN D26, D27). */
  public readonly publicPages: PublicPages;
  /** The Lambda of each inbound hook route (`/hooks/...`), by source. */
  public readonly hookFunctions: ReadonlyMap<string, lambda.Function>;

  constructor(scope: Construct, id: string, props: RestApiProps) {
    super(scope, id);
    this.httpApi = new AccessLoggedHttpApi(this, 'Http', { description: 'Membership service REST API' });
    const functions = new Map<string, lambda.Function>();
    const routeStacks = new Map<string, RouteStack>();
    // The routes register inbound hooks with providers (a bot's webhook) under the public base URL.
    const environment = {
      ...props.environment,
      [ENVIRONMENT_VARIABLES.publicBaseUrl]: props.publicBaseUrl ?? this.httpApi.api.apiEndpoint,
    };

    for (const group of groupRoutes(props.operations)) {
      const stack = new RouteStack(this, group.id, {
        description: `Membership service REST routes of the ${group.module} module${group.parts > 1 ? ` (part ${group.part} of ${group.parts})` : ''}`,
        operations: group.operations,
        httpApi: this.httpApi.api,
        code: props.code,
        tables: props.tables,
        queues: props.queues,
        environment,
        credentialsKey: props.credentialsKey,
        mailFrom: props.mailFrom,
      });
      routeStacks.set(group.id, stack);
      for (const [operationId, fn] of stack.functions) functions.set(operationId, fn);
    }

    // Every request no route matches reaches this Lambda, so unknown paths and wrong methods get the
    // service's problem documents (NOT_FOUND 404, METHOD_NOT_ALLOWED 405 with Allow) instead of API
    // Gateway's own body. It serves no operation, answers before authentication and touches no AWS
    // resource.
    const fallback = new ServiceFunction(this, 'UnmatchedRoute', {
      code: props.code,
      entry: fileEntry('unmatched-route'),
      description: 'REST $default: problem documents for unknown routes',
      timeout: Duration.seconds(10),
      environment: props.environment,
    }).function;
    routeWithoutAuthorizer(this, 'UnmatchedRouteRoute', {
      httpApi: this.httpApi.api,
      routeKey: apigwv2.HttpRouteKey.DEFAULT,
      integration: new HttpLambdaIntegration('Integration', fallback),
      reason: 'Answers NOT_FOUND / METHOD_NOT_ALLOWED for unmatched requests; serves no operation and reads no data.',
    });
    this.unmatchedRouteFunction = fallback;
    this.dashboard = new Dashboard(this, 'Dashboard', {
      httpApi: this.httpApi.api,
      code: props.code,
      tables: props.tables,
      queues: props.queues,
      environment: props.environment,
    });
    this.publicPages = new PublicPages(this, 'PublicPages', {
      httpApi: this.httpApi.api,
      code: props.code,
      tables: props.tables,
      queues: props.queues,
      credentialsKey: props.credentialsKey,
      environment,
    });

    // Inbound hooks (DESIGN D20, D22): public routes outside /v1, each with its own Lambda that checks the
    // provider's secret or signature, reads and writes the main table and, for a project's hook, opens the
    // project's credential; the billing hook alone reads the operator's signing secret (its ARN in its
    // environment, the value fetched at run time).
    const hookFunctions = new Map<string, lambda.Function>();
    for (const hook of HOOK_ROUTES) {
      const stem = pascalCase(hook.functionFile);
      const fn = new ServiceFunction(this, stem, {
        code: props.code,
        entry: fileEntry(hook.functionFile),
        description: `Inbound hook ${hook.method} ${hook.path}`,
        timeout: Duration.seconds(10),
        environment: hook.readsBillingWebhookSecret
          ? {
              ...props.environment,
              [ENVIRONMENT_VARIABLES.billingStripeWebhookSecretArn]: props.billingWebhookSecret.secretArn,
            }
          : props.environment,
      }).function;
      props.tables.table.grant(fn, ...tableActions('readWrite'));
      if (hook.opensCredentials) props.credentialsKey.grant(fn, ...credentialKeyActions('open'));
      if (hook.readsBillingWebhookSecret) props.billingWebhookSecret.grantRead(fn);
      routeWithoutAuthorizer(this, `${stem}Route`, {
        httpApi: this.httpApi.api,
        routeKey: apigwv2.HttpRouteKey.with(hook.path, apigwv2.HttpMethod[hook.method]),
        integration: new HttpLambdaIntegration('Integration', fn),
        reason:
          'Called by the provider, which holds no token: the Lambda checks the secret token the service registered with it (constant-time compare) or the provider\u2019s signature (Stripe-Signature) before changing anything.',
      });
      hookFunctions.set(hook.source, fn);
    }
    this.hookFunctions = hookFunctions;
    this.routeStacks = routeStacks;
    this.functions = functions;
  }
}
