/**
 * E-mail on AWS (DESIGN D32), as CDK assertions on the synthesized stack: with context `mailFrom` the functions that
 * send e-mail (the job worker's messages, the deadline worker's gifts, invitations where they run) get `MAIL_FROM`
 * and `ses:SendEmail`/`ses:SendRawEmail` on exactly the sender's domain and address identities; without it (cdk.json's
 * empty default) nothing is granted or set. Bundling is stubbed as in `billing-webhook-secret.test.ts`; cdk-nag runs
 * and throws on unacknowledged findings.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { grantMailSending, MAIL_SEND_ACTIONS } from '../../lib/mail.js';
import { ENVIRONMENT_VARIABLES } from '../../shared/config.js';
import { OPERATIONS } from '../../shared/operations/registry.js';
import { synthesizeWithStubBundles, type CfnResource, type StubSynthesis } from './templates.js';

type Statement = { Effect: string; Action?: string | string[]; Resource?: unknown };

const JOB_WORKER_HANDLER = 'job-worker.handler';
let withSender: StubSynthesis;

beforeAll(() => {
  withSender = synthesizeWithStubBundles({ mailFrom: 'members@example.com' });
}, 600_000);

/** A stack of one inline function, cheap to synthesize, for what {@link grantMailSending} does alone. */
function oneFunctionStack(): { stack: Stack; fn: lambda.Function } {
  const stack = new Stack(new App(), 'Mail');
  const fn = new lambda.Function(stack, 'Sender', {
    runtime: lambda.Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('export const handler = async () => {};'),
  });
  return { stack, fn };
}

const asArray = <T>(value: T | T[] | undefined): T[] =>
  value === undefined ? [] : Array.isArray(value) ? value : [value];
const refId = (value: any): string => value?.Ref ?? value?.['Fn::GetAtt']?.[0];
const functions = (resources: Record<string, CfnResource>) =>
  Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::Lambda::Function');

/** Every statement granting an SES action, with the role it is attached to. */
function sesStatements(resources: Record<string, CfnResource>): { roleId: string; statement: Statement }[] {
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::IAM::Policy')
    .flatMap((policy) =>
      asArray<any>(policy.Properties.Roles).flatMap((role) =>
        asArray<Statement>(policy.Properties.PolicyDocument.Statement).map((statement) => ({
          roleId: refId(role),
          statement,
        })),
      ),
    )
    .filter(({ statement }) => asArray(statement.Action).some((action) => action.startsWith('ses:')));
}

/** An SES identity ARN as the stack writes it (partition, region and account of the deployment). */
const identityArn = (name: string) => ({
  'Fn::Join': [
    '',
    [
      'arn:',
      { Ref: 'AWS::Partition' },
      ':ses:',
      { Ref: 'AWS::Region' },
      ':',
      { Ref: 'AWS::AccountId' },
      `:identity/${name}`,
    ],
  ],
});

describe('e-mail sending on AWS', () => {
  it('gives the functions that send e-mail MAIL_FROM and SendEmail/SendRawEmail on the sender’s domain and address identities only', () => {
    const { resources } = withSender;
    // The job worker (messages), the deadline worker (gifts), and wherever an operation that sends e-mail itself runs:
    // its route, the dashboard's main area (the team's members page) and, for a tool, the tool server.
    const emailing = OPERATIONS.filter((operation) => operation.sendsEmail);
    expect(emailing.map((operation) => operation.id)).toEqual(['inviteTeamMember']);
    const expected = [
      JOB_WORKER_HANDLER,
      'deadlines.handler',
      'dashboard.handler',
      ...emailing.map((operation) => `${operation.id}.handler`),
      ...(emailing.some((operation) => operation.tool) ? ['mcp.handler'] : []),
    ];
    const senders = functions(resources).filter(
      ([, fn]) => fn.Properties.Environment?.Variables?.[ENVIRONMENT_VARIABLES.mailFrom] !== undefined,
    );
    expect(senders.map(([, fn]) => fn.Properties.Handler as string).sort()).toEqual(expected.sort());
    const statements = sesStatements(resources);
    expect(statements).toHaveLength(senders.length);
    for (const [, sender] of senders) {
      expect(sender.Properties.Environment.Variables[ENVIRONMENT_VARIABLES.mailFrom]).toBe('members@example.com');
      const own = statements.filter(({ roleId }) => roleId === refId(sender.Properties.Role));
      expect(own.map(({ statement }) => statement)).toEqual([
        {
          Effect: 'Allow',
          Action: [...MAIL_SEND_ACTIONS],
          Resource: [identityArn('example.com'), identityArn('members@example.com')],
        },
      ]);
    }
  });

  it('grants no SES action and sets no MAIL_FROM without the context (cdk.json’s empty default)', () => {
    const context = JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')).context;
    expect(context.mailFrom).toBe('');
    for (const mailFrom of [undefined, context.mailFrom as string]) {
      const { stack, fn } = oneFunctionStack();
      grantMailSending(fn, mailFrom);
      const { Resources } = Template.fromStack(stack).toJSON() as { Resources: Record<string, CfnResource> };
      expect(sesStatements(Resources)).toEqual([]);
      const [[, synthesized]] = functions(Resources);
      expect(synthesized.Properties.Environment?.Variables?.[ENVIRONMENT_VARIABLES.mailFrom]).toBeUndefined();
    }
  });

  it('refuses a sender that is not a bare address at synth', () => {
    const { fn } = oneFunctionStack();
    for (const mailFrom of ['Members <members@example.com>', 'members', 'members@localhost'])
      expect(() => grantMailSending(fn, mailFrom), mailFrom).toThrow(/mailFrom must be a bare address/);
  });
});
