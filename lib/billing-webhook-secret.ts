import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/**
 * A complete Secrets Manager secret ARN, with the 6-character suffix Secrets Manager appends to the name
 * (`arn:aws:secretsmanager:eu-west-1:123456789012:secret:billing-whsec-AbC123`), as `create-secret` and
 * `describe-secret` print it.
 */
const COMPLETE_SECRET_ARN_PATTERN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;

/** The only action a reader of the secret gets: the value, nothing else (no `DescribeSecret`, no listing). */
export const BILLING_WEBHOOK_SECRET_READ_ACTIONS = ['secretsmanager:GetSecretValue'] as const;

/** Properties of {@link BillingWebhookSecret}. */
export interface BillingWebhookSecretProps {
  /**
   * The complete ARN of an existing secret to use instead of creating one (context `billingWebhookSecretArn`).
   * It must be encrypted with the account's default `aws/secretsmanager` key (no KMS grant is added).
   * @default a new secret
   */
  readonly existingSecretArn?: string;
}

/**
 * Secret holding the operator's billing webhook signing secret (DESIGN D20; D16: never in env or template): a generated
 * placeholder (the hook refuses every event until `put-secret-value`) or `existingSecretArn`. Readers get the ARN,
 * never the value. Throws at synth on an incomplete ARN, never echoing it.
 */
export class BillingWebhookSecret extends Construct {
  /** The secret (created or imported). */
  public readonly secret: secretsmanager.ISecret;

  constructor(scope: Construct, id: string, props: BillingWebhookSecretProps = {}) {
    super(scope, id);
    if (props.existingSecretArn !== undefined) {
      if (!COMPLETE_SECRET_ARN_PATTERN.test(props.existingSecretArn)) {
        throw new Error(
          'Context billingWebhookSecretArn must be the complete ARN of a Secrets Manager secret (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>; `aws secretsmanager describe-secret --secret-id <name> --query ARN`), never the signing secret itself.',
        );
      }
      this.secret = secretsmanager.Secret.fromSecretCompleteArn(this, 'Secret', props.existingSecretArn);
      return;
    }
    const secret = new secretsmanager.Secret(this, 'Secret', {
      description:
        'Membership service: the signing secret (whsec_...) of the operator billing Stripe webhook to POST /hooks/billing/stripe. Put it with aws secretsmanager put-secret-value; until then the hook refuses every event.',
      // The signing secret can be fetched again from Stripe (or rolled); nothing stored depends on it.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'Stripe issues and rolls the webhook signing secret (Dashboard → Webhooks → Roll secret); Secrets Manager cannot rotate it. The operator puts each new value with put-secret-value; the hook picks it up within 5 minutes.',
    });
    this.secret = secret;
  }

  /** The secret's ARN (the value of `BILLING_STRIPE_WEBHOOK_SECRET_ARN`). */
  public get secretArn(): string {
    return this.secret.secretArn;
  }

  /** Lets `grantee` read the secret's value: {@link BILLING_WEBHOOK_SECRET_READ_ACTIONS} on this secret only. */
  public grantRead(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: [...BILLING_WEBHOOK_SECRET_READ_ACTIONS],
      resourceArns: [this.secret.secretArn],
    });
  }
}
