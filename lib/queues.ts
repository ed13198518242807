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
    this.deadLetterQueue = new sqs.Queue(this, 'PoisonMessages', {
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      retentionPeriod: Duration.days(14),
    });
    Validations.of(this.deadLetterQueue).acknowledge({
      id: 'AwsSolutions-SQS3',
      reason: 'This queue is itself the dead-letter queue of a pipeline queue.',
    });
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
