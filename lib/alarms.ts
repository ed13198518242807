import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { RouteStack } from './route-stack.js';

/** The period every alarm of the service evaluates (one datapoint of this length breaches an alarm). */
export const ALARM_PERIOD = Duration.minutes(5);

/**
 * Lambda `Errors` (failed invocations, a count per {@link ALARM_PERIOD}) at or above which a function's error alarm
 * fires.
 */
export const FUNCTION_ERRORS_THRESHOLD = 1;

/**
 * Lambda `Throttles` (throttled invocation requests, a count per {@link ALARM_PERIOD}) at or above which a function's
 * throttle alarm fires.
 */
export const FUNCTION_THROTTLES_THRESHOLD = 1;

/**
 * Visible messages (`ApproximateNumberOfMessagesVisible`, the maximum over {@link ALARM_PERIOD}) at or
 * above which a failure queue's alarm fires: the delivery and job queues' poison-message queues and the fan-out's
 * failed stream batches should all stay empty, so one message is worth a look.
 */
export const FAILURE_QUEUE_MESSAGES_THRESHOLD = 1;

/**
 * Age of the oldest message of the delivery or job queue (`ApproximateAgeOfOldestMessage`, the maximum over
 * {@link ALARM_PERIOD}) above which that queue's backlog alarm fires. A message waits at most 15 minutes
 * on purpose (the longest SQS `DelaySeconds`; longer waits go through EventBridge Scheduler, DESIGN D7),
 * so a message twice that old means its consumer (dispatcher or job worker) is not keeping up or keeps failing.
 */
export const OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD = Duration.minutes(30);

/** Where alarm notifications go (stack props, or the app's context values of the same names). */
export interface AlarmNotificationSettings {
  /** An email address: the stack creates an SNS topic with this subscription (confirmed by the recipient). */
  readonly alarmEmail?: string;
  /** An existing SNS topic's ARN to notify instead (e.g. a chat or paging integration). */
  readonly alarmTopicArn?: string;
}

/**
 * The topic every alarm notifies, if any: a new SNS topic (TLS only) with an email subscription when
 * `alarmEmail` is given, the existing topic `alarmTopicArn` when that is given, none otherwise (alarms
 * then only change state in the console). Throws when both are given.
 */
export function alarmTopic(scope: Construct, settings: AlarmNotificationSettings): sns.ITopic | undefined {
  if (settings.alarmEmail && settings.alarmTopicArn) throw new Error('Give alarmEmail or alarmTopicArn, not both.');
  if (settings.alarmTopicArn) return sns.Topic.fromTopicArn(scope, 'AlarmTopic', settings.alarmTopicArn);
  if (!settings.alarmEmail) return undefined;
  const topic = new sns.Topic(scope, 'AlarmTopic', { displayName: 'Membership service alarms', enforceSSL: true });
  topic.addSubscription(new EmailSubscription(settings.alarmEmail));
  Validations.of(topic).acknowledge({
    id: 'AwsSolutions-SNS2',
    reason:
      'Alarm notifications carry alarm names and states only, no customer data; CloudWatch cannot publish to a topic encrypted with the AWS managed SNS key.',
  });
  return topic;
}

/** Properties of {@link FunctionAlarms}. */
export interface FunctionAlarmsProps {
  /** The function watched. */
  readonly function: lambda.IFunction;
  /** Notified when an alarm fires (in the function's own stack). */
  readonly topic?: sns.ITopic;
}

/**
 * The two alarms every function of the service gets (DESIGN D23): Lambda `Errors` ≥
 * {@link FUNCTION_ERRORS_THRESHOLD} and `Throttles` ≥ {@link FUNCTION_THROTTLES_THRESHOLD} in one
 * {@link ALARM_PERIOD} (sum; no data is not breaching), each notifying `topic` when given. Created beside
 * the function, in its stack, so a nested route stack holds its routes' alarms (9 resources per route).
 */
export class FunctionAlarms extends Construct {
  /** Failed invocations. */
  public readonly errors: cloudwatch.Alarm;
  /** Throttled invocations. */
  public readonly throttles: cloudwatch.Alarm;

  constructor(scope: Construct, id: string, props: FunctionAlarmsProps) {
    super(scope, id);
    const fn = props.function;
    const name = scope.node.id;
    this.errors = new cloudwatch.Alarm(this, 'Errors', {
      alarmDescription: `${name}: failed invocations (Lambda Errors ≥ ${FUNCTION_ERRORS_THRESHOLD} in ${ALARM_PERIOD.toMinutes()} minutes)`,
      metric: fn.metricErrors({ period: ALARM_PERIOD, statistic: cloudwatch.Stats.SUM }),
      threshold: FUNCTION_ERRORS_THRESHOLD,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    this.throttles = new cloudwatch.Alarm(this, 'Throttles', {
      alarmDescription: `${name}: throttled invocations (Lambda Throttles ≥ ${FUNCTION_THROTTLES_THRESHOLD} in ${ALARM_PERIOD.toMinutes()} minutes)`,
      metric: fn.metricThrottles({ period: ALARM_PERIOD, statistic: cloudwatch.Stats.SUM }),
      threshold: FUNCTION_THROTTLES_THRESHOLD,
      evaluationPeriods: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (props.topic)
      for (const alarm of [this.errors, this.throttles]) alarm.addAlarmAction(new SnsAction(props.topic));
  }
}

/** Properties of {@link OperationalAlarms}. */
export interface OperationalAlarmsProps {
  /** The delivery queue (age of its oldest message). */
  readonly deliveryQueue: sqs.IQueue;
  /** The delivery queue's poison-message queue. */
  readonly deliveryDeadLetterQueue: sqs.IQueue;
  /** The job queue (age of its oldest message). */
  readonly jobQueue: sqs.IQueue;
  /** The job queue's poison-message queue. */
  readonly jobDeadLetterQueue: sqs.IQueue;
  /** The fan-out's failed stream batches. */
  readonly fanOutFailures: sqs.IQueue;
  /** Notified by every alarm, when given ({@link alarmTopic}). */
  readonly topic?: sns.ITopic;
}

/**
 * The service's CloudWatch alarms (DESIGN D23), in the root stack: a message in the delivery or job dead-letter
 * queue or in the fan-out failure queue ({@link FAILURE_QUEUE_MESSAGES_THRESHOLD}), the oldest delivery or job
 * message older than {@link OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD}; and, through {@link watchFunctions},
 * {@link FunctionAlarms} on every Lambda function of the stack and its nested stacks.
 */
export class OperationalAlarms extends Construct {
  /** A poison message in the delivery queue's dead-letter queue. */
  public readonly deliveryDeadLetters: cloudwatch.Alarm;
  /** A poison message in the job queue's dead-letter queue. */
  public readonly jobDeadLetters: cloudwatch.Alarm;
  /** A failed stream batch parked by the fan-out. */
  public readonly fanOutFailures: cloudwatch.Alarm;
  /** The delivery backlog: the oldest message's age. */
  public readonly oldestDeliveryMessage: cloudwatch.Alarm;
  /** The job backlog: the oldest message's age. */
  public readonly oldestJobMessage: cloudwatch.Alarm;
  /** The alarms of each function watched, by the function's construct path. */
  public readonly functionAlarms = new Map<string, FunctionAlarms>();
  private readonly topic: sns.ITopic | undefined;

  constructor(scope: Construct, id: string, props: OperationalAlarmsProps) {
    super(scope, id);
    this.topic = props.topic;
    const queueAlarm = (
      alarmId: string,
      description: string,
      metric: cloudwatch.IMetric,
      threshold: number,
      comparisonOperator: cloudwatch.ComparisonOperator,
    ) =>
      new cloudwatch.Alarm(this, alarmId, {
        alarmDescription: description,
        metric,
        threshold,
        evaluationPeriods: 1,
        comparisonOperator,
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    const maximumPerPeriod = { period: ALARM_PERIOD, statistic: cloudwatch.Stats.MAXIMUM };
    /** A message in a queue that should stay empty. */
    const failureAlarm = (alarmId: string, description: string, queue: sqs.IQueue) =>
      queueAlarm(
        alarmId,
        description,
        queue.metricApproximateNumberOfMessagesVisible(maximumPerPeriod),
        FAILURE_QUEUE_MESSAGES_THRESHOLD,
        cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      );
    /** A queue's oldest message older than {@link OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD}. */
    const backlogAlarm = (alarmId: string, description: string, queue: sqs.IQueue) =>
      queueAlarm(
        alarmId,
        description,
        queue.metricApproximateAgeOfOldestMessage(maximumPerPeriod),
        OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD.toSeconds(),
        cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      );
    this.deliveryDeadLetters = failureAlarm(
      'DeliveryDeadLetters',
      'Delivery messages that failed 5 receives are parked in the delivery dead-letter queue',
      props.deliveryDeadLetterQueue,
    );
    this.fanOutFailures = failureAlarm(
      'FanOutFailures',
      'Stream batches the webhook fan-out could not process after all retries are parked in its failure queue',
      props.fanOutFailures,
    );
    this.jobDeadLetters = failureAlarm(
      'JobDeadLetters',
      'Job messages that failed 5 receives are parked in the job dead-letter queue',
      props.jobDeadLetterQueue,
    );
    this.oldestDeliveryMessage = backlogAlarm(
      'OldestDeliveryMessage',
      `The oldest delivery message is older than ${OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD.toMinutes()} minutes: the dispatcher is not keeping up`,
      props.deliveryQueue,
    );
    this.oldestJobMessage = backlogAlarm(
      'OldestJobMessage',
      `The oldest job message is older than ${OLDEST_QUEUE_MESSAGE_AGE_THRESHOLD.toMinutes()} minutes: the job worker is not keeping up`,
      props.jobQueue,
    );
    if (this.topic) {
      for (const alarm of [
        this.deliveryDeadLetters,
        this.jobDeadLetters,
        this.fanOutFailures,
        this.oldestDeliveryMessage,
        this.oldestJobMessage,
      ])
        alarm.addAlarmAction(new SnsAction(this.topic));
    }
  }

  /**
   * Gives every Lambda function under `root` (its nested stacks included) its {@link FunctionAlarms},
   * created beside the function. A function in a nested {@link RouteStack} notifies the topic through
   * that stack's `AlarmTopicArn` parameter. Call once, after every function exists.
   */
  public watchFunctions(root: Construct): void {
    for (const fn of root.node
      .findAll()
      .filter((construct): construct is lambda.Function => construct instanceof lambda.Function)) {
      const owner = Stack.of(fn);
      const topic = this.topic && owner instanceof RouteStack ? owner.alarmTopic(this.topic.topicArn) : this.topic;
      this.functionAlarms.set(
        fn.node.path,
        new FunctionAlarms(fn.node.scope as Construct, 'Alarms', { function: fn, topic }),
      );
    }
  }
}
