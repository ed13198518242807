import { ArnFormat, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { ENVIRONMENT_VARIABLES } from '../shared/config.js';

/**
 * What a sending function may do with SES (DESIGN D32): `ses:SendEmail` authorizes SES v2 `SendEmail`, the call
 * nodemailer's SES transport makes; `ses:SendRawEmail` the same raw message through the v1 API.
 */
export const MAIL_SEND_ACTIONS = ['ses:SendEmail', 'ses:SendRawEmail'] as const;

/** A bare sending address (`members@example.com`): one `@`, a dotted domain, no display name. */
const MAIL_FROM_PATTERN = /^[^\s@<>"]+@([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+)$/;

/**
 * Lets `fn` send e-mail from `mailFrom` (context `mailFrom`): sets `MAIL_FROM` and grants {@link MAIL_SEND_ACTIONS} on
 * the SES identities that can verify it, its domain's (`identity/example.com`) and its own
 * (`identity/members@example.com`), in the stack's account and region. An unset or empty `mailFrom` does nothing;
 * a malformed one throws at synth.
 */
export function grantMailSending(fn: lambda.Function, mailFrom: string | undefined): void {
  if (!mailFrom) return;
  const domain = MAIL_FROM_PATTERN.exec(mailFrom)?.[1];
  if (!domain)
    throw new Error(`Context mailFrom must be a bare address such as members@example.com, not "${mailFrom}"`);
  const stack = Stack.of(fn);
  const identity = (name: string) =>
    stack.formatArn({
      service: 'ses',
      resource: 'identity',
      resourceName: name,
      arnFormat: ArnFormat.SLASH_RESOURCE_NAME,
    });
  fn.addEnvironment(ENVIRONMENT_VARIABLES.mailFrom, mailFrom);
  fn.addToRolePolicy(
    new iam.PolicyStatement({ actions: [...MAIL_SEND_ACTIONS], resources: [identity(domain), identity(mailFrom)] }),
  );
}
