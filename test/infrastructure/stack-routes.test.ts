/**
 * The stack's tables, REST and MCP APIs, credentials key and outputs, on a synthesis with stub bundles (the bundles
 * themselves: `stack-bundles`).
 */
import { OPERATIONS, routeKey } from '../../shared/operations/registry.js';
import { credentialKeyActions, credentialKeyUse } from '../../shared/credentials/usage.js';
import { DEAD_LETTER_TABLE_DEFINITION, TABLE_DEFINITION } from '../../shared/store/table-definition.js';
import { IDEMPOTENCY_LOCK_SECONDS } from '../../shared/limits/idempotency.js';
import { describe, expect, it } from 'vitest';
import { actionsOf, asArray, isBaselineAction, refId, useStubSynthesis, expectedRouteKeys } from './stack-queries.js';

const synthesis = useStubSynthesis();
const { ofType, credentialsKeyId, onlyFunction, statementsOfFunction, functionOfRoute, restApiId, restRoutes } =
  synthesis;

describe('tables', () => {
  for (const definition of [TABLE_DEFINITION, DEAD_LETTER_TABLE_DEFINITION]) {
    it(`${definition.logicalName} matches its shared definition`, () => {
      const table = synthesis.resources()[definition.logicalName];
      expect(table?.Type).toBe('AWS::DynamoDB::Table');
      expect(table.DeletionPolicy).toBe('Retain');
      const p = table.Properties;
      expect(p.BillingMode).toBe('PAY_PER_REQUEST');
      expect(p.PointInTimeRecoverySpecification).toEqual({ PointInTimeRecoveryEnabled: true });
      expect(p.KeySchema).toEqual([
        { AttributeName: definition.partitionKey.name, KeyType: 'HASH' },
        { AttributeName: definition.sortKey.name, KeyType: 'RANGE' },
      ]);
      const keys = [
        definition.partitionKey,
        definition.sortKey,
        ...definition.globalSecondaryIndexes.flatMap((i) => [i.partitionKey, i.sortKey]),
      ];
      expect(p.AttributeDefinitions).toEqual(
        expect.arrayContaining(keys.map((key) => ({ AttributeName: key.name, AttributeType: key.type }))),
      );
      expect(p.AttributeDefinitions).toHaveLength(new Set(keys.map((key) => key.name)).size);
      expect(p.GlobalSecondaryIndexes ?? []).toEqual(
        definition.globalSecondaryIndexes.map((index) => ({
          IndexName: index.indexName,
          KeySchema: [
            { AttributeName: index.partitionKey.name, KeyType: 'HASH' },
            { AttributeName: index.sortKey.name, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        })),
      );
      expect(p.TimeToLiveSpecification).toEqual({ AttributeName: definition.timeToLiveAttribute, Enabled: true });
      expect(p.StreamSpecification).toEqual(
        definition.streamViewType === null ? undefined : { StreamViewType: definition.streamViewType },
      );
    });
  }

  it('has exactly the two tables', () => {
    expect(
      ofType('AWS::DynamoDB::Table')
        .map(([id]) => id)
        .sort(),
    ).toEqual([TABLE_DEFINITION.logicalName, DEAD_LETTER_TABLE_DEFINITION.logicalName].sort());
  });
});

describe('REST API', () => {
  it('has one route per operation of the registry, keyed by routeKey, plus $default and the dashboard areas’ two per path, with no authorizer', () => {
    const routes = restRoutes();
    expect(routes.map(([, r]) => r.Properties.RouteKey).sort()).toEqual(expectedRouteKeys(OPERATIONS));
    for (const [, r] of routes) expect(r.Properties.AuthorizationType).toBe('NONE');
    expect(ofType('AWS::ApiGatewayV2::Authorizer')).toEqual([]);
    expect(synthesis.resources()[restApiId()].Properties.CorsConfiguration).toBeUndefined();
  });

  it('sends unmatched requests ($default) to a Lambda that serves no operation and may touch no table', () => {
    const routes = restRoutes().filter(([, r]) => r.Properties.RouteKey === '$default');
    expect(routes).toHaveLength(1);
    expect(
      synthesis.rootTemplate().Resources[routes[0][0]],
      'the $default route stays in the root stack',
    ).toBeDefined();
    const functionId = functionOfRoute(routes[0][1]);
    const fn = synthesis.resources()[functionId].Properties;
    expect(fn.Handler).toBe('unmatched-route.handler');
    expect(fn.Environment.Variables.OPERATION_ID).toBeUndefined();
    expect(JSON.stringify(statementsOfFunction(functionId))).not.toMatch(/dynamodb:|sqs:/);
  });

  it('integrates each route with its own Lambda, which runs that operation’s own bundle', () => {
    const routes = restRoutes();
    const seen = new Set<string>();
    for (const operation of OPERATIONS) {
      const found = routes.filter(([, r]) => r.Properties.RouteKey === routeKey(operation));
      expect(found, routeKey(operation)).toHaveLength(1);
      const functionId = functionOfRoute(found[0][1]);
      expect(seen.has(functionId), `${operation.id} shares a Lambda`).toBe(false);
      seen.add(functionId);
      const fn = synthesis.resources()[functionId].Properties;
      expect(fn.Handler).toBe(`${operation.id}.handler`);
      expect(fn.Environment.Variables.OPERATION_ID).toBeUndefined();
      expect(fn.Timeout).toBe(10);
      expect(fn.MemorySize).toBe(512);
      expect(fn.Architectures).toEqual(['arm64']);
      expect(functionId).toContain(operation.id.charAt(0).toUpperCase() + operation.id.slice(1));
    }
    // One per operation; the `$default` route's Lambda runs `unmatched-route`.
    expect(onlyFunction('unmatched-route.handler')).toBeDefined();
  });

  it.each([
    ['telegram', 'telegram-hook'],
    ['discord', 'discord-hook'],
  ])(
    'sends POST /hooks/%s/{project_id} to its own Lambda (functions/%s), which may use the main table and open credentials only',
    (platform, functionFile) => {
      const routes = restRoutes().filter(([, r]) => r.Properties.RouteKey === `POST /hooks/${platform}/{project_id}`);
      expect(routes).toHaveLength(1);
      const functionId = functionOfRoute(routes[0][1]);
      expect(synthesis.resources()[functionId].Properties.Handler).toBe(`${functionFile}.handler`);
      expect(synthesis.resources()[functionId].Properties.Timeout).toBe(10);
      const statements = statementsOfFunction(functionId);
      const actions = actionsOf(statements).filter((action) => !action.startsWith('logs:'));
      expect(actions.filter((action) => action.startsWith('kms:'))).toEqual(['kms:Decrypt']);
      expect(actions.some((action) => action.startsWith('sqs:') || action === 'dynamodb:Scan')).toBe(false);
      const kmsResources = statements
        .filter((statement) => asArray(statement.Action).includes('kms:Decrypt'))
        .flatMap((statement) => asArray(statement.Resource).map(refId));
      expect(kmsResources).toEqual([credentialsKeyId()]);
    },
  );

  it('sends POST /hooks/stripe/{project_id} and POST /hooks/billing/stripe to their own Lambdas; only the project hook may open credentials', () => {
    for (const [routeKey, handler, opens] of [
      ['POST /hooks/stripe/{project_id}', 'stripe-hook.handler', true],
      ['POST /hooks/billing/stripe', 'billing-stripe-hook.handler', false],
    ] as const) {
      const routes = restRoutes().filter(([, r]) => r.Properties.RouteKey === routeKey);
      expect(routes, routeKey).toHaveLength(1);
      const functionId = functionOfRoute(routes[0][1]);
      expect(synthesis.resources()[functionId].Properties.Handler).toBe(handler);
      const actions = actionsOf(statementsOfFunction(functionId)).filter((action) => !action.startsWith('logs:'));
      expect(
        actions.filter((action) => action.startsWith('kms:')),
        routeKey,
      ).toEqual(opens ? ['kms:Decrypt'] : []);
      expect(
        actions.some((action) => action.startsWith('sqs:') || action === 'dynamodb:Scan'),
        routeKey,
      ).toBe(false);
      expect(actions, routeKey).toEqual(
        expect.arrayContaining(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']),
      );
    }
  });

  it('grants each route only what it needs: no Scan, no BatchWriteItem, no stream reads', () => {
    for (const operation of OPERATIONS) {
      const [functionId] = onlyFunction(`${operation.id}.handler`);
      const statements = statementsOfFunction(functionId);
      const actions = actionsOf(statements);
      const resourcesOf = (action: string): string[] =>
        statements.filter((s) => asArray(s.Action).includes(action)).flatMap((s) => asArray(s.Resource).map(refId));
      if (operation.ability === null && operation.rest.method === 'GET') {
        expect(
          actions.filter((a) => !isBaselineAction(a)),
          operation.id,
        ).toEqual([]);
        continue;
      }
      for (const forbidden of [
        'dynamodb:Scan',
        'dynamodb:BatchWriteItem',
        'dynamodb:GetRecords',
        'dynamodb:GetShardIterator',
        'dynamodb:DescribeTable',
      ]) {
        expect(actions, operation.id).not.toContain(forbidden);
      }
      expect(resourcesOf('dynamodb:GetItem'), operation.id).toContain(TABLE_DEFINITION.logicalName);
      expect(resourcesOf('dynamodb:UpdateItem'), operation.id).toContain(TABLE_DEFINITION.logicalName);
      const usesDeadLetters = operation.rest.path.startsWith('/v1/webhook-deliveries');
      expect(resourcesOf('dynamodb:GetItem').includes(DEAD_LETTER_TABLE_DEFINITION.logicalName), operation.id).toBe(
        usesDeadLetters,
      );
      expect(resourcesOf('dynamodb:PutItem').includes(DEAD_LETTER_TABLE_DEFINITION.logicalName), operation.id).toBe(
        usesDeadLetters && operation.rest.method !== 'GET',
      );
      expect(actions.includes('sqs:SendMessage'), operation.id).toBe(operation.rest.method !== 'GET');
      expect(actions.some((a) => a.startsWith('scheduler:') || a === 'iam:PassRole')).toBe(false);
      // The credentials key only where the operation opens or seals a credential (DESIGN D16, D23).
      expect(actions.filter((a) => a.startsWith('kms:')).sort(), operation.id).toEqual(
        credentialKeyActions(credentialKeyUse([operation])).sort(),
      );
      if (actions.includes('kms:Decrypt'))
        expect(resourcesOf('kms:Decrypt'), operation.id).toEqual([credentialsKeyId()]);
      // A checkout emits nothing but opens the project's Stripe key (D26).
      if (operation.id === 'createCheckoutSession') expect(actions, operation.id).toContain('kms:Decrypt');
    }
  });
});

describe('credentials key (DESIGN D16)', () => {
  it('is one symmetric KMS key with rotation, kept when the stack goes, whose ARN every function knows', () => {
    const keys = ofType('AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    const [keyId, key] = keys[0];
    expect(key.Properties).toMatchObject({ EnableKeyRotation: true });
    expect(key.Properties.KeySpec ?? 'SYMMETRIC_DEFAULT').toBe('SYMMETRIC_DEFAULT');
    expect(key.DeletionPolicy).toBe('Retain');
    for (const [id, fn] of ofType('AWS::Lambda::Function'))
      expect(fn.Properties.Environment.Variables.CREDENTIALS_KMS_KEY_ID, id).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
  });

  it('lets only the functions that open or seal credentials use it: the connecting route opens and seals, endpoint creation and rotation seal, moderation, access, the hooks, the public pages, the deadline worker and the dispatcher open; MCP and the dashboard’s main and projects areas do both, its sign-in area neither', () => {
    const users = new Map<string, string[]>();
    for (const [functionId, fn] of ofType('AWS::Lambda::Function')) {
      const actions = actionsOf(statementsOfFunction(functionId))
        .filter((action) => action.startsWith('kms:'))
        .sort();
      if (actions.length) users.set(String(fn.Properties.Handler).replace(/\.handler$/, ''), actions);
    }
    expect(users.get('connectProjectBot')).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    // A webhook endpoint's signing secrets are sealed at rest (DESIGN D8, D16): creating and rotating them (the
    // API's rotation keeps no old secret) only makes a data key; MCP and the dashboard run those and more.
    for (const name of ['createWebhookEndpoint', 'rotateWebhookEndpointSecret'])
      expect(users.get(name), name).toEqual(['kms:GenerateDataKey']);
    for (const name of ['mcp', 'dashboard', 'dashboard-projects'])
      expect(users.get(name), name).toEqual(['kms:Decrypt', 'kms:GenerateDataKey']);
    expect(users.has('dashboard-sign-in')).toBe(false);
    for (const name of [
      'disconnectProjectBot',
      'linkProjectResource',
      'banSubscriber',
      'kickSubscriber',
      'unbanSubscriber',
      'createSubscription',
      'cancelSubscription',
      'telegram-hook',
      'discord-hook',
      'stripe-hook',
      'deadlines',
      'public-pages',
      'dispatcher',
    ]) {
      expect(users.get(name), name).toEqual(['kms:Decrypt']);
    }
    for (const name of [
      'getProject',
      'listProjects',
      'createProject',
      'fan-out',
      'sweeper',
      'unmatched-route',
      'checkProjectAccess',
      'billing-stripe-hook',
      'getWebhookEndpoint',
      'sendTestWebhookEvent',
    ])
      expect(users.has(name), name).toBe(false);
  });

  it('gives the REST routes the API endpoint as the public base URL of inbound hooks', () => {
    const [, connect] = onlyFunction('connectProjectBot.handler');
    expect(connect.Properties.Environment.Variables.PUBLIC_BASE_URL).toEqual(
      synthesis.rootTemplate().Outputs!.RestApiUrl.Value,
    );
  });
});

describe('MCP API', () => {
  it('has its own API: ANY and OPTIONS /mcp and the protected-resource metadata to the MCP Lambda, the authorization-server metadata and ANY /oauth/{proxy+} to the OAuth Lambda, and no API Gateway CORS', () => {
    const mcpUrl = synthesis.rootTemplate().Outputs!.McpUrl.Value['Fn::Join'][1];
    expect(mcpUrl[1]).toBe('/mcp');
    const apiId = refId(mcpUrl[0]);
    expect(apiId).not.toBe(refId(synthesis.rootTemplate().Outputs!.RestApiUrl.Value));
    expect(synthesis.resources()[apiId].Properties.ProtocolType).toBe('HTTP');
    expect(synthesis.resources()[apiId].Properties.CorsConfiguration).toBeUndefined();

    const routes = ofType('AWS::ApiGatewayV2::Route').filter(([, r]) => refId(r.Properties.ApiId) === apiId);
    const [mcpFunctionId, mcpFunction] = onlyFunction('mcp.handler');
    const [oauthFunctionId, oauthFunction] = onlyFunction('oauth.handler');
    const routeKeysOf = (functionId: string) =>
      routes
        .filter(([, route]) => functionOfRoute(route) === functionId)
        .map(([, r]) => r.Properties.RouteKey as string)
        .sort();
    expect(routeKeysOf(mcpFunctionId)).toEqual([
      'ANY /mcp',
      'GET /.well-known/oauth-protected-resource',
      'GET /.well-known/oauth-protected-resource/mcp',
      'OPTIONS /mcp',
    ]);
    expect(routeKeysOf(oauthFunctionId)).toEqual([
      'ANY /oauth/{proxy+}',
      'GET /.well-known/oauth-authorization-server',
    ]);
    expect(routes).toHaveLength(6);
    for (const fn of [mcpFunction, oauthFunction]) expect(fn.Properties.Timeout).toBe(IDEMPOTENCY_LOCK_SECONDS);
    // OAuth consent happens on the dashboard, served by the REST API (DESIGN D30).
    expect(oauthFunction.Properties.Environment.Variables.DASHBOARD_BASE_URL).toEqual(
      synthesis.rootTemplate().Outputs!.RestApiUrl.Value,
    );
    // The authorization server holds the main table only: no queue, no dead-letter table, no credentials key.
    const actions = actionsOf(statementsOfFunction(oauthFunctionId));
    expect(actions.filter((action) => /^(sqs|kms):/.test(action))).toEqual([]);
    expect(JSON.stringify(statementsOfFunction(oauthFunctionId))).not.toContain(
      DEAD_LETTER_TABLE_DEFINITION.logicalName,
    );
  });
});

describe('outputs', () => {
  it('exports RestApiUrl, McpUrl, DashboardUrl and TableName', () => {
    const outputs = synthesis.rootTemplate().Outputs!;
    expect(synthesis.resources()[refId(outputs.RestApiUrl.Value)].Type).toBe('AWS::ApiGatewayV2::Api');
    expect(outputs.McpUrl.Value['Fn::Join'][1][1]).toBe('/mcp');
    expect(outputs.DashboardUrl.Value['Fn::Join'][1][1]).toBe('/dashboard');
    expect(outputs.TableName.Value).toEqual({ Ref: TABLE_DEFINITION.logicalName });
  });
});
