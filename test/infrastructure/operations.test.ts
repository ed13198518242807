/**
 * Operable on AWS (DESIGN D23), as CDK assertions on the synthesized stack: alarms on
 * every function and on the pipeline's queues (with the SNS option), API stage throttling, the
 * dispatcher's reserved concurrency and event-source maximum concurrency, active tracing, table deletion
 * protection and least-privilege IAM for read routes and workers. Bundling is stubbed (the bundle content
 * does not matter here; `stack-bundles.test.ts` builds the real bundles), so each synthesis runs no esbuild.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ALARM_PERIOD,
  FAILURE_QUEUE_MESSAGES_THRESHOLD,
  FUNCTION_ERRORS_THRESHOLD,
  FUNCTION_THROTTLES_THRESHOLD,
  OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD,
} from '../../lib/alarms.js';
import { createMembershipApp } from '../../lib/app.js';
import { STAGE_THROTTLE_BURST_LIMIT, STAGE_THROTTLE_RATE_LIMIT } from '../../lib/http-api.js';
import { TABLE_DELETE_ACTIONS, TABLE_READ_ACTIONS, TABLE_WRITE_ACTIONS } from '../../lib/route-stack.js';
import {
  DISPATCHER_MAX_CONCURRENCY,
  DISPATCHER_RESERVED_CONCURRENCY,
  JOB_WORKER_MAX_CONCURRENCY,
  JOB_WORKER_RESERVED_CONCURRENCY,
} from '../../lib/webhooks.js';
import { OPERATIONS } from '../../shared/operations/registry.js';
import { RATE_COUNTER_PARTITION_PREFIX, TOKEN_PARTITION_PREFIX } from '../../shared/store/keys.js';
import { DEAD_LETTER_TABLE_DEFINITION, TABLE_DEFINITION } from '../../shared/store/table-definition.js';
import {
  synthesizeWithStubBundles,
  type CfnResource,
  type StubSynthesis,
  type SynthesizedTemplate,
} from './templates.js';

type Statement = { Effect: string; Action?: string | string[]; Resource?: unknown; Condition?: any };

const ALARM_EMAIL = 'ops@example.com';
const EXISTING_TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:existing-alarms';

type Synthesized = StubSynthesis;

let withEmail: Synthesized;
let withTopicArn: Synthesized;

beforeAll(() => {
  withEmail = synthesizeWithStubBundles({ alarmEmail: ALARM_EMAIL });
  withTopicArn = synthesizeWithStubBundles({ alarmTopicArn: EXISTING_TOPIC_ARN });
}, 600_000); // two synths: minutes on a loaded 2-core machine

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const refId = (value: any): string => value?.Ref ?? value?.['Fn::GetAtt']?.[0];
const ofType = (resources: Record<string, CfnResource>, type: string): [string, CfnResource][] =>
  Object.entries(resources).filter(([, r]) => r.Type === type);
const functionWithHandler = (resources: Record<string, CfnResource>, handler: string): [string, CfnResource] => {
  const found = ofType(resources, 'AWS::Lambda::Function').filter(([, fn]) => fn.Properties.Handler === handler);
  expect(found, handler).toHaveLength(1);
  return found[0];
};

/** Every statement of a function's role (inline and attached policies). */
function statementsOfFunction(resources: Record<string, CfnResource>, functionId: string): Statement[] {
  const roleId = refId(resources[functionId].Properties.Role);
  return ofType(resources, 'AWS::IAM::Policy')
    .filter(([, policy]) => asArray<any>(policy.Properties.Roles).some((role) => refId(role) === roleId))
    .flatMap(([, policy]) => asArray<Statement>(policy.Properties.PolicyDocument.Statement));
}
const dynamoActions = (statements: Statement[]): string[] =>
  [...new Set(statements.flatMap((s) => asArray(s.Action)).filter((a) => a.startsWith('dynamodb:')))].sort();
/** The statements on a table or its indexes (not on its stream: the fan-out's event source reads that). */
const onTable = (statements: Statement[], logicalName: string): Statement[] =>
  statements.filter(
    (s) => JSON.stringify(s.Resource).includes(`"${logicalName}"`) && !JSON.stringify(s.Resource).includes('StreamArn'),
  );

/** The alarms of a metric on a function, in the resources of all templates. */
function functionAlarms(resources: Record<string, CfnResource>, functionId: string, metricName: string): CfnResource[] {
  return ofType(resources, 'AWS::CloudWatch::Alarm')
    .map(([, alarm]) => alarm)
    .filter(
      (alarm) =>
        alarm.Properties.Namespace === 'AWS/Lambda' &&
        alarm.Properties.MetricName === metricName &&
        refId(alarm.Properties.Dimensions?.[0]?.Value) === functionId,
    );
}

/** The template (root or nested) that holds a logical id. */
const templateOf = (synthesized: Synthesized, logicalId: string): SynthesizedTemplate =>
  synthesized.templates.find((t) => logicalId in t.template.Resources)!;

describe('alarms (DESIGN D23)', () => {
  it('gives every function one Errors and one Throttles alarm, in the function’s own template, notifying the alarm topic', () => {
    const { resources } = withEmail;
    const [topicId] = ofType(resources, 'AWS::SNS::Topic')[0];
    const functions = ofType(resources, 'AWS::Lambda::Function');
    expect(functions.length).toBeGreaterThan(OPERATIONS.length);
    for (const [functionId] of functions) {
      for (const [metricName, threshold] of [
        ['Errors', FUNCTION_ERRORS_THRESHOLD],
        ['Throttles', FUNCTION_THROTTLES_THRESHOLD],
      ] as const) {
        const alarms = functionAlarms(resources, functionId, metricName);
        expect(alarms, `${functionId} ${metricName}`).toHaveLength(1);
        expect(alarms[0].Properties).toMatchObject({
          Statistic: 'Sum',
          Period: ALARM_PERIOD.toSeconds(),
          Threshold: threshold,
          EvaluationPeriods: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          TreatMissingData: 'notBreaching',
        });
        // Nested-stack parameters are resolved to the root's values: every action is the one topic.
        expect(alarms[0].Properties.AlarmActions.map(refId), functionId).toEqual([topicId]);
      }
      const holder = templateOf(withEmail, functionId);
      const alarmsInHolder = Object.values(holder.template.Resources).filter(
        (r) => r.Type === 'AWS::CloudWatch::Alarm' && refId(r.Properties.Dimensions?.[0]?.Value) === functionId,
      );
      expect(alarmsInHolder, `alarms of ${functionId} beside it`).toHaveLength(2);
    }
  });

  it('alarms on a message in the delivery or job dead-letter queue and in the fan-out failure queue, and on the age of the oldest delivery and job message', () => {
    const { resources, stack } = withEmail;
    const template = Template.fromStack(stack);
    const [topicId] = ofType(resources, 'AWS::SNS::Topic')[0];
    const pipelineQueues = ofType(resources, 'AWS::SQS::Queue').filter(([, q]) => q.Properties.RedrivePolicy);
    expect(pipelineQueues).toHaveLength(2);
    const deadLetterQueueIds = pipelineQueues.map(([, q]) => refId(q.Properties.RedrivePolicy.deadLetterTargetArn));
    const fanOutMapping = ofType(resources, 'AWS::Lambda::EventSourceMapping').find(
      ([, m]) => m.Properties.DestinationConfig,
    )![1];
    const fanOutFailuresId = refId(fanOutMapping.Properties.DestinationConfig.OnFailure.Destination);

    for (const queueId of [...deadLetterQueueIds, fanOutFailuresId]) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
        Statistic: 'Maximum',
        Threshold: FAILURE_QUEUE_MESSAGES_THRESHOLD,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        AlarmActions: [{ Ref: topicId }],
      });
    }
    for (const [queueId] of pipelineQueues)
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }],
        Statistic: 'Maximum',
        Threshold: OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD.toSeconds(),
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: [{ Ref: topicId }],
      });
    expect(FAILURE_QUEUE_MESSAGES_THRESHOLD).toBe(1); // "messages visible > 0"
  });

  it('with alarmEmail: one TLS-only SNS topic with that email subscription', () => {
    const template = Template.fromStack(withEmail.stack);
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: ALARM_EMAIL });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      },
    });
  });

  it('with alarmTopicArn: every alarm notifies that existing topic, and no topic is created', () => {
    const { resources, templates } = withTopicArn;
    expect(ofType(resources, 'AWS::SNS::Topic')).toEqual([]);
    const alarms = ofType(resources, 'AWS::CloudWatch::Alarm');
    // Two per function, and five of the queues: two dead-letter queues, the fan-out failures, two backlogs.
    expect(alarms.length).toBe(2 * ofType(resources, 'AWS::Lambda::Function').length + 5);
    for (const [id, alarm] of alarms) expect(alarm.Properties.AlarmActions, id).toEqual([EXISTING_TOPIC_ARN]);
    // A nested route stack receives the topic through its `AlarmTopicArn` parameter.
    for (const nested of templates.filter((t) => t.nested))
      expect(Object.keys(nested.template.Parameters ?? {}), nested.path).toContain('AlarmTopicArn');
  });

  it('refuses alarmEmail and alarmTopicArn together', () => {
    expect(() =>
      createMembershipApp({
        context: { alarmEmail: ALARM_EMAIL, alarmTopicArn: EXISTING_TOPIC_ARN },
        nag: false,
        bundler: () => undefined,
      }),
    ).toThrow(/not both/);
  });
});

describe('throttling and concurrency (DESIGN D23)', () => {
  it('throttles both API stages (REST and MCP) at the named rate and burst', () => {
    const template = Template.fromStack(withEmail.stack);
    const stages = template.findResources('AWS::ApiGatewayV2::Stage');
    expect(Object.keys(stages)).toHaveLength(2);
    for (const stage of Object.values(stages)) {
      expect(stage.Properties.DefaultRouteSettings).toMatchObject({
        ThrottlingRateLimit: STAGE_THROTTLE_RATE_LIMIT,
        ThrottlingBurstLimit: STAGE_THROTTLE_BURST_LIMIT,
      });
    }
    expect(STAGE_THROTTLE_BURST_LIMIT).toBeGreaterThanOrEqual(STAGE_THROTTLE_RATE_LIMIT);
  });

  it('reserves concurrency for the dispatcher and the job worker, at least their event sources’ maximum concurrency; no other function reserves any', () => {
    const { resources } = withEmail;
    const consumers = [
      ['dispatcher.handler', DISPATCHER_RESERVED_CONCURRENCY, DISPATCHER_MAX_CONCURRENCY],
      ['job-worker.handler', JOB_WORKER_RESERVED_CONCURRENCY, JOB_WORKER_MAX_CONCURRENCY],
    ] as const;
    for (const [handler, reserved, maximum] of consumers) {
      const [functionId, fn] = functionWithHandler(resources, handler);
      expect(fn.Properties.ReservedConcurrentExecutions).toBe(reserved);
      const mappings = ofType(resources, 'AWS::Lambda::EventSourceMapping').filter(
        ([, m]) => refId(m.Properties.FunctionName) === functionId,
      );
      expect(mappings).toHaveLength(1);
      expect(mappings[0][1].Properties.ScalingConfig).toEqual({ MaximumConcurrency: maximum });
      expect(reserved).toBeGreaterThanOrEqual(maximum);
    }
    const reserving = ofType(resources, 'AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
      .map(([, fn]) => fn.Properties.Handler as string);
    expect(reserving.sort()).toEqual(consumers.map(([handler]) => handler).sort());
  });
});

describe('tracing and tables (DESIGN D23)', () => {
  it('turns on active X-Ray tracing for every function, whose role may send trace segments', () => {
    const { resources } = withEmail;
    for (const [functionId, fn] of ofType(resources, 'AWS::Lambda::Function')) {
      expect(fn.Properties.TracingConfig, functionId).toEqual({ Mode: 'Active' });
      // On `Resource: *` (X-Ray has no resource-level permissions; the fan-out's statement also holds
      // dynamodb:ListStreams).
      const xray = statementsOfFunction(resources, functionId).filter((s) =>
        asArray(s.Action).some((action) => action.startsWith('xray:')),
      );
      expect(xray, functionId).toHaveLength(1);
      expect(xray[0].Resource, functionId).toBe('*');
      expect(
        asArray(xray[0].Action)
          .filter((action) => action.startsWith('xray:'))
          .sort(),
        functionId,
      ).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    }
  });

  it('protects both tables from deletion and retains them', () => {
    const template = Template.fromStack(withEmail.stack);
    for (const definition of [TABLE_DEFINITION, DEAD_LETTER_TABLE_DEFINITION]) {
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
        Properties: Match.objectLike({ DeletionProtectionEnabled: true }),
      });
      expect(
        withEmail.resources[definition.logicalName].Properties.DeletionProtectionEnabled,
        definition.logicalName,
      ).toBe(true);
    }
  });
});

describe('least-privilege IAM (DESIGN D23)', () => {
  const readRoutes = OPERATIONS.filter((operation) => operation.rest.method === 'GET' && operation.ability !== null);
  const writeRoutes = OPERATIONS.filter((operation) => operation.rest.method !== 'GET');

  it('gives read routes read-only table access: GetItem, BatchGetItem and Query, plus UpdateItem on the rate-limit counters only', () => {
    const { resources } = withEmail;
    expect(readRoutes.length).toBeGreaterThan(20);
    for (const operation of readRoutes) {
      const [functionId] = functionWithHandler(resources, `${operation.id}.handler`);
      const statements = statementsOfFunction(resources, functionId);
      const actions = dynamoActions(statements);
      expect(actions, operation.id).toEqual([...TABLE_READ_ACTIONS, 'dynamodb:UpdateItem'].sort());
      for (const write of [
        'dynamodb:PutItem',
        'dynamodb:DeleteItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:Scan',
        'dynamodb:ConditionCheckItem',
      ])
        expect(actions, operation.id).not.toContain(write);
      const updates = statements.filter((s) => asArray(s.Action).includes('dynamodb:UpdateItem'));
      expect(updates, operation.id).toHaveLength(1);
      expect(asArray(updates[0].Action), operation.id).toEqual(['dynamodb:UpdateItem']);
      expect(refId(updates[0].Resource), operation.id).toBe(TABLE_DEFINITION.logicalName);
      expect(updates[0].Condition, operation.id).toEqual({
        'ForAllValues:StringLike': {
          'dynamodb:LeadingKeys': [`${RATE_COUNTER_PARTITION_PREFIX}*`, `${TOKEN_PARTITION_PREFIX}*`],
        },
      });
      expect(
        statements.some((s) => asArray(s.Action).some((a) => a.startsWith('sqs:'))),
        operation.id,
      ).toBe(false);
    }
  });

  it('gives write routes single-item writes and deletes, never Scan or BatchWriteItem', () => {
    const { resources } = withEmail;
    for (const operation of writeRoutes) {
      const [functionId] = functionWithHandler(resources, `${operation.id}.handler`);
      const mainTable = dynamoActions(
        onTable(statementsOfFunction(resources, functionId), TABLE_DEFINITION.logicalName),
      );
      expect(mainTable, operation.id).toEqual(
        [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS, ...TABLE_DELETE_ACTIONS].sort(),
      );
    }
  });

  it('lets no function Scan or BatchWriteItem, and only the functions whose code deletes DeleteItem', () => {
    const { resources } = withEmail;
    const deleting = new Map<string, string[]>();
    for (const [functionId, fn] of ofType(resources, 'AWS::Lambda::Function')) {
      const statements = statementsOfFunction(resources, functionId);
      const actions = dynamoActions(statements);
      expect(actions, fn.Properties.Handler).not.toContain('dynamodb:Scan');
      expect(actions, fn.Properties.Handler).not.toContain('dynamodb:BatchWriteItem');
      const tables = [TABLE_DEFINITION.logicalName, DEAD_LETTER_TABLE_DEFINITION.logicalName].filter((table) =>
        dynamoActions(onTable(statements, table)).includes('dynamodb:DeleteItem'),
      );
      if (tables.length) deleting.set(String(fn.Properties.Handler).replace(/\.handler$/, ''), tables);
    }
    const main = [TABLE_DEFINITION.logicalName];
    const both = [TABLE_DEFINITION.logicalName, DEAD_LETTER_TABLE_DEFINITION.logicalName];
    const expected = new Map<string, string[]>([
      ...writeRoutes.map((operation): [string, string[]] => [
        operation.id,
        operation.rest.path.startsWith('/v1/webhook-deliveries') ? both : main,
      ]),
      ['mcp', both],
      ['oauth', main],
      ['dashboard', both],
      ['dashboard-projects', main],
      ['dashboard-sign-in', main],
      ['public-pages', main],
      ['deadlines', main],
      ['dispatcher', [DEAD_LETTER_TABLE_DEFINITION.logicalName]],
      ['job-worker', main],
    ]);
    expect(Object.fromEntries([...deleting].sort())).toEqual(Object.fromEntries([...expected].sort()));
  });

  it('gives the webhook workers keyed reads, queries and single-item writes: the fan-out and the sweeper never delete, the dispatcher deletes dead-letter copies only, the job worker access-code batch items only', () => {
    const { resources } = withEmail;
    const readWrite = [...TABLE_READ_ACTIONS, ...TABLE_WRITE_ACTIONS].sort();
    for (const worker of ['fan-out', 'sweeper']) {
      const [functionId] = functionWithHandler(resources, `${worker}.handler`);
      expect(
        dynamoActions(onTable(statementsOfFunction(resources, functionId), TABLE_DEFINITION.logicalName)),
        worker,
      ).toEqual(readWrite);
    }
    const [dispatcherId] = functionWithHandler(resources, 'dispatcher.handler');
    expect(dynamoActions(onTable(statementsOfFunction(resources, dispatcherId), TABLE_DEFINITION.logicalName))).toEqual(
      readWrite,
    );
    const [jobWorkerId] = functionWithHandler(resources, 'job-worker.handler');
    const onMain = onTable(statementsOfFunction(resources, jobWorkerId), TABLE_DEFINITION.logicalName);
    expect(dynamoActions(onMain)).toEqual([...readWrite, 'dynamodb:DeleteItem'].sort());
    // Deletes on the main table only in the partitions of a batch's items: codes and batches, lookups, references.
    const deletes = onMain.filter((s) => asArray(s.Action).includes('dynamodb:DeleteItem'));
    expect(deletes).toHaveLength(1);
    expect(asArray(deletes[0].Action)).toEqual(['dynamodb:DeleteItem']);
    expect(deletes[0].Condition).toEqual({
      'ForAllValues:StringLike': {
        'dynamodb:LeadingKeys': [
          'TEAM#*#PROJECT#*#ACCESS_CODE',
          'TEAM#*#PROJECT#*#ACCESS_CODE_LOOKUP#*',
          'TEAM#*#ACCESS_CODE#*',
        ],
      },
    });
    expect(
      dynamoActions(onTable(statementsOfFunction(resources, dispatcherId), DEAD_LETTER_TABLE_DEFINITION.logicalName)),
    ).toEqual([...readWrite, 'dynamodb:DeleteItem'].sort());
    for (const [functionId] of [functionWithHandler(resources, 'sweeper.handler'), [jobWorkerId]])
      expect(onTable(statementsOfFunction(resources, functionId), DEAD_LETTER_TABLE_DEFINITION.logicalName)).toEqual(
        [],
      );
  });
});
