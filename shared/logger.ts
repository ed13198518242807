import { Logger } from '@aws-lambda-powertools/logger';

/**
 * The service's structured logger (Powertools for AWS Lambda, DESIGN §3): one JSON object per line,
 * service name from `POWERTOOLS_SERVICE_NAME`, level from `POWERTOOLS_LOG_LEVEL` (default INFO; tests
 * and the local server may set it). Never log request bodies, headers or secrets — only ids, codes and
 * error messages of our own.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'membership-service' });
