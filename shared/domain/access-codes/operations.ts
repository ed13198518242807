import { defineModule, defineOperation } from '../../operations/definition.js';
import { ProjectIdParams } from '../projects/schema.js';
import { accessCodesInternalOperations } from './internal-operations.js';
import {
  AccessCode,
  AccessCodeIdParams,
  AccessCodeList,
  AccessCodeRedemption,
  GenerateAccessCodesRequest,
  GeneratedAccessCodes,
  ListAccessCodesQuery,
  RedeemAccessCodeRequest,
} from './schema.js';

/**
 * The access code operations (DESIGN D13, D18): per project, so a project-scoped token reaches its own projects' codes.
 */
export const accessCodesModule = defineModule({
  folder: 'access-codes',
  operations: {
    listAccessCodes: defineOperation({
      id: 'listAccessCodes',
      summary: 'List a project’s access codes (never the codes themselves: only their last characters).',
      tag: 'Access codes',
      ability: 'project-access-code:view-any',
      teamWide: false,
      params: ProjectIdParams,
      query: ListAccessCodesQuery,
      output: AccessCodeList,
      events: [],
      rest: { method: 'GET', path: '/v1/projects/{project_id}/access-codes', successStatus: 200 },
      tool: {
        name: 'list_access_codes',
        title: 'List access codes',
        kind: 'read',
        description:
          'List a project’s access codes, optionally of one batch, plan or status (the codes themselves are shown only at generation).',
      },
    }),
    generateAccessCodes: defineOperation({
      id: 'generateAccessCodes',
      summary:
        'Generate a batch of 1 to 1000 access codes for a plan of the project; the codes are returned once (emits access_code.batch_generated).',
      tag: 'Access codes',
      ability: 'project-access-code:create',
      teamWide: false,
      params: ProjectIdParams,
      body: GenerateAccessCodesRequest,
      output: GeneratedAccessCodes,
      events: ['access_code.batch_generated'],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/access-codes/batches', successStatus: 201 },
      tool: {
        name: 'generate_access_codes',
        title: 'Generate access codes',
        kind: 'create',
        description:
          'Generate a batch of 1 to 1000 access codes for a plan of the project; the codes are returned once, in this result only.',
      },
    }),
    getAccessCode: defineOperation({
      id: 'getAccessCode',
      summary: 'Read one access code (its last characters only, never the code).',
      tag: 'Access codes',
      ability: 'project-access-code:view',
      teamWide: false,
      params: AccessCodeIdParams,
      output: AccessCode,
      events: [],
      rest: { method: 'GET', path: '/v1/access-codes/{id}', successStatus: 200 },
    }),
    revokeAccessCode: defineOperation({
      id: 'revokeAccessCode',
      summary: 'Revoke an active access code: it can no longer be redeemed.',
      tag: 'Access codes',
      ability: 'project-access-code:revoke',
      teamWide: false,
      params: AccessCodeIdParams,
      output: AccessCode,
      events: [],
      rest: { method: 'POST', path: '/v1/access-codes/{id}/revoke', successStatus: 200 },
      tool: {
        name: 'revoke_access_code',
        title: 'Revoke access code',
        kind: 'destructive',
        description: 'Revoke an active access code so it can no longer be redeemed (redemptions already made stay).',
      },
    }),
    /**
     * Subscriber-side redemption (D18): works during billing lockdown (D20) and counts new subscribers against the
     * tier. Ability `project-subscription:create` (its effect is a new subscription); creating `subscriber` also needs
     * `project-user:update`. REST only.
     */
    redeemAccessCode: defineOperation({
      id: 'redeemAccessCode',
      summary:
        'Redeem an access code for a subscriber (existing, or created with the redemption): creates the subscription (free_access: active until now + access_days; trial: trialing), counts the use, one redemption per subscriber and code (emits subscription.created and access_code.redeemed; access_code.expired when it was the last use). Subscriber side: keeps working during a billing lockdown.',
      tag: 'Access codes',
      ability: 'project-subscription:create',
      teamWide: false,
      lockdown: 'exempt',
      tierLimit: 'subscribers',
      params: ProjectIdParams,
      body: RedeemAccessCodeRequest,
      output: AccessCodeRedemption,
      events: [
        'subscription.created',
        'access_code.redeemed',
        'access_code.expired',
        'member.updated',
        'member.access_granted',
        'member.converted',
      ],
      rest: { method: 'POST', path: '/v1/projects/{project_id}/access-codes/redeem', successStatus: 201 },
    }),
  },
  internal: accessCodesInternalOperations,
});
