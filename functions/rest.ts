/** REST route Lambda: one per route of the route table; OPERATION_ID names the route it serves. */
import { awsRuntime } from '../shared/aws/runtime.js';
import { createRestHandler } from '../shared/http/rest-handler.js';

export const handler = createRestHandler(awsRuntime, { operationId: process.env.OPERATION_ID });
