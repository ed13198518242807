import { RemovalPolicy } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';

/**
 * The KMS key of stored credentials (DESIGN D16: envelope encryption "on AWS with a KMS key the stack
 * creates"): a symmetric key with yearly automatic rotation that wraps the data key of every stored bot
 * token and provider key (`shared/aws/kms-key.ts`). It is retained when the stack is deleted (the
 * credentials it protects may outlive a stack). Functions get `kms:Decrypt` and, where they store new
 * credentials, `kms:GenerateDataKey` — only those whose operations need them (`shared/credentials/usage.ts`).
 */
export class CredentialsKey extends Construct {
  /** The key. */
  public readonly key: kms.Key;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.key = new kms.Key(this, 'Key', {
      description: 'Membership service: wraps the data keys of stored credentials (bot tokens, provider keys)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }
}
