/** Inbound Discord interactions Lambda: `POST /hooks/discord/{project_id}` (DESIGN D28). */
import { awsRuntime } from '../shared/aws/runtime.js';
import { discordHook } from '../shared/hooks/discord.js';
import { createHookHandler } from '../shared/hooks/hook.js';

/** The Discord hook Lambda's handler: API Gateway (HTTP API) requests to `POST /hooks/discord/{project_id}`. */
export const handler = createHookHandler(awsRuntime, discordHook);
