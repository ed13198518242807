/**
 * How the HTTPS transport names a failed attempt (DESIGN D9): an error of Node (`net`/`tls`/OpenSSL) or
 * undici mapped to its {@link AttemptFailure} kind by its code and message.
 */
import { AttemptFailure } from './port.js';

const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_NODATA', 'EAI_NONAME']);
const TIMEOUT_CODES = new Set([
  'ETIMEDOUT',
  'ESOCKETTIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
]);
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_DESTROYED',
  'UND_ERR_ABORTED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
]);
const TLS_CODE_PREFIXES = ['CERT_', 'ERR_TLS_', 'ERR_SSL_', 'UNABLE_TO_', 'ERR_OSSL_'];
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'HOSTNAME_MISMATCH',
  'EPROTO',
  'INVALID_CA',
]);

/**
 * Maps an error from Node (`net`/`tls`/OpenSSL) or undici to an {@link AttemptFailure}; unknown errors
 * are `connect`. The message is the error's own, prefixed with its code when it does not contain it.
 */
export function classifyError(error: unknown): AttemptFailure {
  if (error instanceof AttemptFailure) return error;
  const e = (error ?? {}) as { code?: string; message?: string };
  const code = e.code ?? '';
  const message = (e.message ?? String(error)).trim();
  const describe = (text: string): string => (code && !text.includes(code) ? `${code}: ${text}` : text);
  if (DNS_CODES.has(code)) return new AttemptFailure('dns', describe(message));
  if (TIMEOUT_CODES.has(code)) return new AttemptFailure('timeout', describe(message));
  // Checked before the TLS patterns: a reset during the handshake says "...TLS connection..." but is a
  // connection failure, not a certificate or protocol one.
  if (CONNECT_CODES.has(code)) return new AttemptFailure('connect', describe(message));
  if (
    TLS_CODES.has(code) ||
    TLS_CODE_PREFIXES.some((p) => code.startsWith(p)) ||
    /ssl|tls|certificate|wrong version/i.test(message)
  ) {
    return new AttemptFailure('tls', describe(message));
  }
  return new AttemptFailure('connect', describe(message));
}
