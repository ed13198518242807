import { KMSClient } from '@aws-sdk/client-kms';
import {
  ConfigurationError,
  DEFAULT_LOCAL_ENCRYPTION_KEY,
  ENVIRONMENT_VARIABLES,
  integrationConfig,
} from '../config.js';
import type { KeyEncryptionKey } from '../credentials/envelope.js';
import { awsClient } from './clients.js';
import { kmsKeyEncryptionKey } from './kms-key.js';
import { localKeyEncryptionKey } from '../credentials/local-key.js';

/**
 * The key-encryption key the configuration names (DESIGN D16): the KMS key `CREDENTIALS_KMS_KEY_ID` when
 * set (the AWS stack sets it), else the local key `ENCRYPTION_KEY` (default
 * {@link DEFAULT_LOCAL_ENCRYPTION_KEY}, so `npm start` and the tests need no setup). Inside a Lambda
 * function (`AWS_LAMBDA_FUNCTION_NAME` set) the local fallback is refused: throws {@link ConfigurationError},
 * so a misconfigured function can never seal credentials under the public default key.
 */
export function keyEncryptionKeyFromEnvironment(env: NodeJS.ProcessEnv = process.env): KeyEncryptionKey {
  const config = integrationConfig(env);
  if (config.credentialsKmsKeyId) return kmsKeyEncryptionKey(awsClient(new KMSClient({})), config.credentialsKmsKeyId);
  if (env.AWS_LAMBDA_FUNCTION_NAME) {
    throw new ConfigurationError(
      `Configuration of the Lambda function: ${ENVIRONMENT_VARIABLES.credentialsKmsKeyId} is required to read or store credentials.`,
    );
  }
  return localKeyEncryptionKey(Buffer.from(config.encryptionKey ?? DEFAULT_LOCAL_ENCRYPTION_KEY, 'base64'));
}
