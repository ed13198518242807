import { Duration, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';

/** Properties of {@link PipelineQueue}. */
export interface PipelineQueueProps {
  /** Timeout of the function that consumes the queue. */
  readonly consumerTimeout: Duration;
}

/**
 * A queue of the pipeline (DESIGN D7) and its dead-letter queue for poison messages (received 5 times without
 * success): SSE, TLS only, visibility timeout six times its consumer's timeout as AWS recommends for SQS event
 * sources. The delivery queue carries "look at delivery X, attempt N" and replay batches to the dispatcher; the job
 * queue carries messages to send and the jobs' next steps to the job worker.
 */
export class PipelineQueue extends Construct {
  /** The queue. */
  public readonly queue: sqs.Queue;
  /** Poison messages of {@link PipelineQueue.queue}. */
  public readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: PipelineQueueProps) {
    super(scope, id);
    this.deadLetterQueue = failureQueue(this, 'PoisonMessages', 'the dead-letter queue of a pipeline queue');
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      visibilityTimeout: Duration.seconds(props.consumerTimeout.toSeconds() * 6),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: 5 },
    });
  }
}

/**
 * The pipeline's two queues (DESIGN D7). The queue port routes each message by its kind, so every function that
 * starts work may send to both ({@link grantSendToQueues}).
 */
export interface PipelineQueues {
  readonly deliveries: sqs.IQueue;
  readonly jobs: sqs.IQueue;
}

/** Lets `grantee` send to both queues of the pipeline. */
export function grantSendToQueues(queues: PipelineQueues, grantee: iam.IGrantable): void {
  queues.deliveries.grantSendMessages(grantee);
  queues.jobs.grantSendMessages(grantee);
}

/**
 * A queue where failed work is parked for an operator (SSE, TLS only, kept 14 days): a dead-letter queue or a stream
 * mapping's on-failure destination, `role` saying which (it needs no dead-letter queue of its own, cdk-nag SQS3).
 */
export function failureQueue(scope: Construct, id: string, role: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: sqs.QueueEncryption.SQS_MANAGED,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
  });
  Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: `This queue is itself ${role}.` });
  return queue;
}
