/**
 * What the MCP server SDK takes from its runtime shims (`@modelcontextprotocol/server/_shims`), for the Lambda bundles
 * (DESIGN D23): esbuild resolves that import here (`lib/function-code.ts`). The SDK's Node shims default to an Ajv JSON
 * Schema validator (about 160 KB), which only `fromJsonSchema` and server-sent form elicitation use, and this server
 * uses neither; the tool server passes its own validator ({@link JSON_SCHEMA_VALIDATOR}, the SDK's edge-runtime one).
 */
import { CfWorkerJsonSchemaValidator } from '@modelcontextprotocol/server/validators/cf-worker';

/** @public The validator the SDK constructs when a server is given none (read by the SDK through the alias). */
export { CfWorkerJsonSchemaValidator as DefaultJsonSchemaValidator };
/** @public Node's `process`, as the SDK's Node shims export it (its stdio transport reads it). */
export { default as process } from 'node:process';

/** The JSON Schema validator the tool server gives the SDK, locally and on Lambda alike. */
export const JSON_SCHEMA_VALIDATOR = new CfWorkerJsonSchemaValidator();
