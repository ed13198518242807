/**
 * The stack's layout, functions, webhook pipeline, deadline worker and IAM, on a synthesis with stub bundles (the
 * bundles themselves: `stack-bundles`).
 */
import { FUNCTION_FILES } from '../../lib/function-code.js';
import { MAX_ROUTES_PER_STACK } from '../../lib/rest-api.js';
import { OPERATIONS, routeKey } from '../../shared/operations/registry.js';
import { DEAD_LETTER_TABLE_DEFINITION, TABLE_DEFINITION } from '../../shared/store/table-definition.js';
import { describe, expect, it } from 'vitest';
import { MAX_RESOURCES_PER_TEMPLATE, type CfnResource } from './templates.js';
import {
  actionsOf,
  asArray,
  isBaselineAction,
  refId,
  useStubSynthesis,
  expectSchedulerTrust,
  type Statement,
} from './stack-queries.js';

const synthesis = useStubSynthesis();
const { ofType, onlyFunction, statementsOfRole, statementsOfFunction, schedulerRoles, retrySchedulerRole } = synthesis;

/** Most resources any one template may hold (CloudFormation's limit is 500; DESIGN D23 keeps clear of it). */

/**
 * The only actions allowed on `Resource: '*'`, because their AWS API has no resource-level
 * permissions: `dynamodb:ListStreams` (added by the fan-out's DynamoDB stream event source) and the two
 * X-Ray actions of active tracing (every function, DESIGN D23).
 */
const ACTIONS_REQUIRING_STAR_RESOURCE = ['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
/** Actions every function's role has whatever it does: its own log group and X-Ray trace segments. */
describe('stack layout (DESIGN D23)', () => {
  it(`keeps every template at or below ${MAX_RESOURCES_PER_TEMPLATE} resources`, () => {
    const counts = synthesis
      .templates()
      .map((t) => ({ stack: t.path, resources: Object.keys(t.template.Resources).length }));
    console.info('resources per template (registry):', JSON.stringify(counts));
    for (const { stack: where, resources: count } of counts)
      expect(count, where).toBeLessThanOrEqual(MAX_RESOURCES_PER_TEMPLATE);
  });

  it('holds each module’s routes and their Lambdas in its own nested stack; API, tables, queues, MCP and workers in the root', () => {
    const modules = [...new Set(OPERATIONS.map((operation) => operation.module))];
    const nested = synthesis.templates().filter((t) => t.nested);
    expect(nested).toHaveLength(
      modules.reduce(
        (sum, module) => sum + Math.ceil(OPERATIONS.filter((o) => o.module === module).length / MAX_ROUTES_PER_STACK),
        0,
      ),
    );
    for (const operation of OPERATIONS) {
      const holders = nested.filter((t) =>
        Object.values(t.template.Resources).some(
          (r) => r.Type === 'AWS::Lambda::Function' && r.Properties.Handler === `${operation.id}.handler`,
        ),
      );
      expect(holders, operation.id).toHaveLength(1);
      const [holder] = holders;
      const routeKeys = Object.values(holder.template.Resources)
        .filter((r) => r.Type === 'AWS::ApiGatewayV2::Route')
        .map((r) => r.Properties.RouteKey);
      expect(routeKeys, operation.id).toContain(routeKey(operation));
      // Every route of the stack belongs to the same module.
      const moduleOf = new Map(OPERATIONS.map((o) => [routeKey(o), o.module]));
      expect(new Set(routeKeys.map((key) => moduleOf.get(key)))).toEqual(new Set([operation.module]));
    }
    const rootTypes = new Set(Object.values(synthesis.rootTemplate().Resources).map((r) => r.Type));
    for (const type of [
      'AWS::ApiGatewayV2::Api',
      'AWS::ApiGatewayV2::Stage',
      'AWS::DynamoDB::Table',
      'AWS::SQS::Queue',
      'AWS::Scheduler::ScheduleGroup',
      'AWS::Events::Rule',
    ]) {
      expect(rootTypes.has(type), type).toBe(true);
    }
    const rootHandlers = Object.values(synthesis.rootTemplate().Resources)
      .filter((r) => r.Type === 'AWS::Lambda::Function')
      .map((r) => r.Properties.Handler)
      .sort();
    expect(rootHandlers).toEqual(FUNCTION_FILES.map((file) => `${file}.handler`).sort());
    const routeResourceTypes = [
      'AWS::Logs::LogGroup',
      'AWS::IAM::Role',
      'AWS::IAM::Policy',
      'AWS::Lambda::Function',
      'AWS::ApiGatewayV2::Integration',
      'AWS::Lambda::Permission',
      'AWS::ApiGatewayV2::Route',
      'AWS::CloudWatch::Alarm',
    ];
    for (const t of nested) {
      for (const resource of Object.values(t.template.Resources))
        expect(routeResourceTypes, t.path).toContain(resource.Type);
    }
  });

  it('names the nested stacks’ parameters after what they carry', () => {
    for (const t of synthesis.templates().filter((x) => x.nested)) {
      for (const name of Object.keys(t.template.Parameters ?? {})) {
        expect(
          [
            'HttpApiId',
            'TableName',
            'DeadLetterTableName',
            'DeliveryQueueUrl',
            'TableArn',
            'DeadLetterTableArn',
            'DeliveryQueueArn',
            'JobQueueUrl',
            'JobQueueArn',
            'CredentialsKmsKeyId',
            'PublicBaseUrl',
            'CredentialsKeyArn',
            'AlarmTopicArn',
          ],
          t.path,
        ).toContain(name);
      }
    }
  });
});

/** The queue of the pipeline whose construct is `name` (`Delivery`, `Jobs`): the one with a redrive policy. */
function pipelineQueue(name: string): [string, CfnResource] {
  const queues = ofType('AWS::SQS::Queue').filter(([id, q]) => q.Properties.RedrivePolicy && id.startsWith(name));
  expect(queues).toHaveLength(1);
  return queues[0];
}

describe('functions', () => {
  it('all run nodejs24.x on arm64 with the shared environment and their own log group', () => {
    const functions = ofType('AWS::Lambda::Function');
    // Routes, $default, MCP, dashboard, public pages, fan-out, dispatcher, sweeper, deadlines, the Telegram hook
    expect(functions).toHaveLength(OPERATIONS.length + FUNCTION_FILES.length);
    const [queueId] = pipelineQueue('Delivery');
    const [jobQueueId] = pipelineQueue('Jobs');
    for (const [id, fn] of functions) {
      const p = fn.Properties;
      expect(p.Runtime, id).toBe('nodejs24.x');
      expect(p.Architectures, id).toEqual(['arm64']);
      expect(p.MemorySize, id).toBe(512);
      expect(p.Environment.Variables).toMatchObject({
        TABLE_NAME: { Ref: TABLE_DEFINITION.logicalName },
        DEAD_LETTER_TABLE_NAME: { Ref: DEAD_LETTER_TABLE_DEFINITION.logicalName },
        DELIVERY_QUEUE_URL: { Ref: queueId },
        JOB_QUEUE_URL: { Ref: jobQueueId },
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: expect.any(String),
      });
      expect(synthesis.resources()[refId(p.LoggingConfig.LogGroup)].Type).toBe('AWS::Logs::LogGroup');
    }
  });

  it('uses no custom resources (whose provider Lambdas would not be nodejs24.x)', () => {
    const custom = Object.values(synthesis.resources()).filter(
      (r) => r.Type.startsWith('Custom::') || r.Type === 'AWS::CloudFormation::CustomResource',
    );
    expect(custom).toEqual([]);
  });
});

describe('webhook pipeline', () => {
  const deliveryQueue = () => pipelineQueue('Delivery');

  it.each([
    ['Delivery', 'dispatcher.handler'],
    ['Jobs', 'job-worker.handler'],
  ])(
    '%s queue: SSE, TLS only, redrive to its DLQ after 5 receives, visibility ≥ 6× its consumer’s timeout',
    (name, consumer) => {
      const [queueId, queue] = pipelineQueue(name);
      const [, dispatcher] = onlyFunction(consumer);
      expect(dispatcher.Properties.Timeout).toBe(30);
      expect(queue.Properties.SqsManagedSseEnabled).toBe(true);
      expect(queue.Properties.VisibilityTimeout).toBeGreaterThanOrEqual(6 * dispatcher.Properties.Timeout);
      expect(queue.Properties.RedrivePolicy.maxReceiveCount).toBe(5);
      const dlq = synthesis.resources()[refId(queue.Properties.RedrivePolicy.deadLetterTargetArn)];
      expect(dlq.Type).toBe('AWS::SQS::Queue');
      expect(dlq.Properties.SqsManagedSseEnabled).toBe(true);
      const policies = ofType('AWS::SQS::QueuePolicy').filter(([, p]) =>
        p.Properties.Queues.some((q: any) => refId(q) === queueId),
      );
      expect(policies).toHaveLength(1);
      expect(policies[0][1].Properties.PolicyDocument.Statement).toContainEqual(
        expect.objectContaining({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
      );
    },
  );

  it.each([
    ['Delivery', 'dispatcher.handler'],
    ['Jobs', 'job-worker.handler'],
  ])('%s queue: %s consumes it in batches of 10 with partial batch responses', (name, consumer) => {
    const [queueId] = pipelineQueue(name);
    const [dispatcherId] = onlyFunction(consumer);
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, m]) => refId(m.Properties.EventSourceArn) === queueId,
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0][1].Properties).toMatchObject({
      FunctionName: { Ref: dispatcherId },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('fan-out reads the table stream, filtered to INSERTs of outbox event items', () => {
    const [fanOutId] = onlyFunction('fan-out.handler');
    const mappings = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, m]) =>
        JSON.stringify(m.Properties.EventSourceArn) ===
        JSON.stringify({ 'Fn::GetAtt': [TABLE_DEFINITION.logicalName, 'StreamArn'] }),
    );
    expect(mappings).toHaveLength(1);
    const p = mappings[0][1].Properties;
    expect(p).toMatchObject({
      FunctionName: { Ref: fanOutId },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    expect(p.MaximumRetryAttempts).toBeGreaterThan(0);
    expect(synthesis.resources()[refId(p.DestinationConfig.OnFailure.Destination)].Type).toBe('AWS::SQS::Queue');
    expect(p.FilterCriteria.Filters).toHaveLength(1);
    expect(JSON.parse(p.FilterCriteria.Filters[0].Pattern)).toEqual({
      eventName: ['INSERT'],
      dynamodb: { NewImage: { entity: { S: ['event'] } } },
    });
  });

  it('has the retry schedule group and a scheduler role that can only send to the delivery queue', () => {
    const [queueId] = deliveryQueue();
    const groups = ofType('AWS::Scheduler::ScheduleGroup');
    expect(groups).toHaveLength(1);
    expect(groups[0][1].Properties.Name).toBe('membership-webhook-retries');

    const [roleId, role] = retrySchedulerRole();
    expectSchedulerTrust(role);
    expect(statementsOfRole(roleId)).toEqual([
      { Effect: 'Allow', Action: 'sqs:SendMessage', Resource: { 'Fn::GetAtt': [queueId, 'Arn'] } },
    ]);
  });

  it('dispatcher and sweeper may schedule in the group and pass the scheduler role, nobody else may', () => {
    const [queueId] = deliveryQueue();
    const [groupId] = ofType('AWS::Scheduler::ScheduleGroup')[0];
    const [schedulerRoleId] = retrySchedulerRole();
    const schedulingFunctions = [onlyFunction('dispatcher.handler'), onlyFunction('sweeper.handler')];
    for (const [functionId, fn] of schedulingFunctions) {
      expect(fn.Properties.Environment.Variables).toMatchObject({
        SCHEDULER_GROUP_NAME: { Ref: groupId },
        SCHEDULER_ROLE_ARN: { 'Fn::GetAtt': [schedulerRoleId, 'Arn'] },
        DELIVERY_QUEUE_ARN: { 'Fn::GetAtt': [queueId, 'Arn'] },
      });
      const statements = statementsOfFunction(functionId);
      const scheduling = statements.filter((s) => asArray(s.Action).some((a) => a.startsWith('scheduler:')));
      expect(scheduling).toHaveLength(1);
      expect(asArray(scheduling[0].Action).sort()).toEqual(['scheduler:CreateSchedule', 'scheduler:DeleteSchedule']);
      const scheduleArn = JSON.stringify(scheduling[0].Resource);
      expect(scheduleArn).toContain(':schedule/');
      expect(scheduleArn).toContain(JSON.stringify({ Ref: groupId }));
      const passRole = statements.filter((s) => asArray(s.Action).includes('iam:PassRole'));
      expect(passRole).toHaveLength(1);
      expect(passRole[0].Resource).toEqual({ 'Fn::GetAtt': [schedulerRoleId, 'Arn'] });
      expect(passRole[0].Condition).toEqual({ StringEquals: { 'iam:PassedToService': 'scheduler.amazonaws.com' } });
    }
    const schedulingIds = new Set(schedulingFunctions.map(([id]) => id));
    for (const [functionId] of ofType('AWS::Lambda::Function')) {
      if (schedulingIds.has(functionId)) continue;
      const actions = actionsOf(statementsOfFunction(functionId));
      expect(
        actions.some((a) => a.startsWith('scheduler:') || a.startsWith('iam:')),
        functionId,
      ).toBe(false);
    }
  });

  it('runs the sweeper on a rate(5 minutes) rule', () => {
    const [sweeperId] = onlyFunction('sweeper.handler');
    const rules = ofType('AWS::Events::Rule');
    expect(rules).toHaveLength(1);
    expect(rules[0][1].Properties.ScheduleExpression).toBe('rate(5 minutes)');
    expect(rules[0][1].Properties.Targets.map((t: any) => t.Arn)).toEqual([{ 'Fn::GetAtt': [sweeperId, 'Arn'] }]);
    expect(
      ofType('AWS::Lambda::Permission').some(
        ([, p]) => p.Properties.Principal === 'events.amazonaws.com' && refId(p.Properties.FunctionName) === sweeperId,
      ),
    ).toBe(true);
  });
});

describe('deadline worker (DESIGN D15)', () => {
  it('runs functions/deadlines on an EventBridge Scheduler rate(1 minute) schedule, through a role that may only invoke it', () => {
    const [workerId, worker] = onlyFunction('deadlines.handler');
    expect(worker.Properties.Timeout).toBe(60);
    const schedules = ofType('AWS::Scheduler::Schedule');
    expect(schedules).toHaveLength(1);
    const schedule = schedules[0][1].Properties;
    expect(schedule).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      FlexibleTimeWindow: { Mode: 'OFF' },
      State: 'ENABLED',
    });
    expect(schedule.GroupName).toBeUndefined();
    expect(schedule.Target.Arn).toEqual({ 'Fn::GetAtt': [workerId, 'Arn'] });
    const roleId = refId(schedule.Target.RoleArn);
    expectSchedulerTrust(synthesis.resources()[roleId]);
    expect(statementsOfRole(roleId)).toEqual([
      { Effect: 'Allow', Action: 'lambda:InvokeFunction', Resource: { 'Fn::GetAtt': [workerId, 'Arn'] } },
    ]);
    // The two roles EventBridge Scheduler may assume: the retry timers' and this schedule's.
    expect(
      schedulerRoles()
        .map(([id]) => id)
        .sort(),
    ).toEqual([retrySchedulerRole()[0], roleId].sort());
  });

  it('lets the worker use the main table with keyed operations and queries only: no Scan, no BatchWriteItem, no queue, no dead-letter table', () => {
    const [workerId] = onlyFunction('deadlines.handler');
    const statements = statementsOfFunction(workerId);
    const actions = actionsOf(statements).filter((action) => !isBaselineAction(action));
    expect([...new Set(actions)].sort()).toEqual(
      [
        'dynamodb:BatchGetItem',
        'dynamodb:ConditionCheckItem',
        'dynamodb:DeleteItem',
        'dynamodb:GetItem',
        'dynamodb:PutItem',
        'dynamodb:Query',
        'dynamodb:UpdateItem',
        'kms:Decrypt',
      ].sort(),
    );
    const tableResources = statements
      .filter((s) => asArray(s.Action).some((a) => a.startsWith('dynamodb:')))
      .flatMap((s) => asArray(s.Resource));
    expect(tableResources.length).toBeGreaterThan(0);
    for (const resource of tableResources) {
      expect(JSON.stringify(resource)).toContain(TABLE_DEFINITION.logicalName);
      expect(JSON.stringify(resource)).not.toContain(DEAD_LETTER_TABLE_DEFINITION.logicalName);
    }
  });
});

describe('IAM', () => {
  /** Every statement of every identity and resource policy in every template. */
  function allStatements(): { where: string; statement: Statement }[] {
    const found: { where: string; statement: Statement }[] = [];
    for (const [id, r] of Object.entries(synthesis.resources())) {
      const documents: any[] = [];
      if (r.Type === 'AWS::IAM::Policy' || r.Type === 'AWS::IAM::ManagedPolicy' || r.Type === 'AWS::SQS::QueuePolicy') {
        documents.push(r.Properties.PolicyDocument);
      }
      if (r.Type === 'AWS::IAM::Role')
        documents.push(...asArray<any>(r.Properties.Policies).map((p) => p.PolicyDocument));
      for (const document of documents) {
        for (const statement of asArray<Statement>(document.Statement)) found.push({ where: id, statement });
      }
    }
    return found;
  }

  it(`uses no Action "*" and no Resource "*" except for ${ACTIONS_REQUIRING_STAR_RESOURCE.join(', ')}`, () => {
    const statements = allStatements();
    expect(statements.length).toBeGreaterThan(0);
    for (const { where, statement } of statements) {
      const actions = asArray(statement.Action);
      expect(statement.NotAction, where).toBeUndefined();
      expect(statement.NotResource, where).toBeUndefined();
      expect(actions, where).not.toContain('*');
      if (statement.Effect === 'Allow') {
        expect(
          actions.filter((a) => a.endsWith(':*')),
          where,
        ).toEqual([]);
        if (asArray(statement.Resource).includes('*')) {
          expect(ACTIONS_REQUIRING_STAR_RESOURCE, `${where}: Resource "*"`).toEqual(expect.arrayContaining(actions));
        }
      }
    }
  });

  it('lets no function Scan or BatchWriteItem (no code does), and no function but the fan-out read streams (DESIGN D23)', () => {
    for (const [functionId, fn] of ofType('AWS::Lambda::Function')) {
      const actions = actionsOf(statementsOfFunction(functionId));
      for (const forbidden of ['dynamodb:Scan', 'dynamodb:BatchWriteItem'])
        expect(actions, fn.Properties.Handler).not.toContain(forbidden);
      if (fn.Properties.Handler === 'fan-out.handler') continue;
      for (const forbidden of ['dynamodb:GetRecords', 'dynamodb:GetShardIterator'])
        expect(actions, fn.Properties.Handler).not.toContain(forbidden);
    }
  });

  it('attaches no AWS managed policies', () => {
    for (const [id, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns, id).toBeUndefined();
  });
});
