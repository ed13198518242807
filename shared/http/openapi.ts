import { sample } from 'openapi-sampler';
import { createDocument } from 'zod-openapi';
import { ERROR_CODES } from '../catalogues/error-codes.js';
import { API_VERSION } from '../catalogues/version.js';
import { AUTHENTICATED } from '../operations/definition.js';
import { WEBHOOK_EVENTS } from '../catalogues/webhook-events.js';
import { envelopeSchemaOf } from '../domain/events/schema.js';
import { OPERATIONS } from '../operations/registry.js';
import { Problem } from '../schemas/common.js';
import { MAX_BODY_BYTES } from './rest-pipeline.js';

let cached: ReturnType<typeof createDocument> | undefined;

/**
 * The OpenAPI 3.1 description served at `GET /openapi.json` (interface "What the service does" 4),
 * generated from the route table: every operation carries `x-required-scopes` (the one ability it
 * needs; `[]` for the public documents), its zod request/response schemas and the problem responses
 * (DESIGN D1; 402 on the writes a billing lockdown refuses and the creates a tier limits, D20). Built once per process.
 */
export function openApiDocument(serverUrl?: string): ReturnType<typeof createDocument> {
  if (!cached) cached = buildDocument();
  return serverUrl ? { ...cached, servers: [{ url: serverUrl }] } : cached;
}

function problemResponse(description: string) {
  return { description, content: { 'application/problem+json': { schema: Problem } } };
}

/** True when the operation's query or body names other objects by id (`*_id`, `*_ids`), which may not exist (404). */
function namesObjects(route: (typeof OPERATIONS)[number]): boolean {
  return [route.query, route.body].some((schema) =>
    Object.keys(schema?.shape ?? {}).some((field) => field !== 'confirm_team_id' && /(^|_)ids?$/.test(field)),
  );
}

type OverrideContext = {
  zodSchema: {
    _zod: {
      def: { type: string; checks?: Array<{ _zod: { def: { check: string; tx?: (value: string) => string } } }> };
    };
  };
  jsonSchema: Record<string, unknown>;
  io: 'input' | 'output';
};

/**
 * Says in JSON Schema what zod's `.trim()` means for the input: a trimmed string with a minimum length
 * must hold a character that is not white space (`pattern: \S`); without it the document would accept
 * `" "`, which the service refuses.
 */
function describeTrimmedInput(context: OverrideContext): void {
  const def = context.zodSchema._zod.def;
  if (context.io !== 'input' || def.type !== 'string' || context.jsonSchema.pattern !== undefined) return;
  const trims = (def.checks ?? []).some(
    (check) => check._zod.def.check === 'overwrite' && check._zod.def.tx?.(' x ') === 'x',
  );
  if (trims && Number(context.jsonSchema.minLength ?? 0) >= 1) context.jsonSchema.pattern = '\\S';
}

function buildDocument(): ReturnType<typeof createDocument> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of OPERATIONS) {
    const isWrite = route.rest.method !== 'GET';
    const body = route.body;
    const responses: Record<string, unknown> = {
      [String(route.rest.successStatus)]: {
        description: route.summary,
        ...(route.output
          ? { content: { 'application/json': { schema: route.output } } }
          : { content: { 'application/json': { schema: { type: 'object' } } } }),
      },
    };
    if (route.ability) {
      responses['401'] = problemResponse('AUTHENTICATION_REQUIRED: missing, malformed, unknown or revoked token.');
      if (route.ability !== AUTHENTICATED || route.teamWide) {
        responses['403'] = problemResponse(
          route.ability === AUTHENTICATED
            ? 'TOKEN_MISSING_ABILITY: the token is narrowed to projects.'
            : 'TOKEN_MISSING_ABILITY: the token lacks the required ability.',
        );
      }
      responses['429'] = problemResponse('RATE_LIMITED: the `rest` bucket is exhausted; see Retry-After.');
    }
    if (route.params || namesObjects(route) || (!route.ability && isWrite)) {
      responses['404'] = problemResponse(
        !route.ability && isWrite
          ? 'NOT_FOUND: the credential in the body names nothing that can be used (unknown, expired or used).'
          : 'NOT_FOUND: no such object in your team (the path, or an id the request names).',
      );
    }
    // Every operation refuses unknown query parameters; writes also refuse bad bodies and reused keys.
    responses['422'] = problemResponse(
      isWrite
        ? 'VALIDATION_FAILED with field-level `errors`, or IDEMPOTENCY_KEY_REUSED.'
        : 'VALIDATION_FAILED with field-level `errors`.',
    );
    if (!route.ability && isWrite)
      responses['429'] = problemResponse(
        'RATE_LIMITED: the per-IP bucket of requests without a token is exhausted; see Retry-After.',
      );
    if (route.callsProvider)
      responses['502'] = problemResponse(
        'PROVIDER_UNAVAILABLE: the platform or payment provider could not be reached or failed; nothing was changed.',
      );
    if (route.tierLimit || (isWrite && route.ability && route.lockdown !== 'exempt')) {
      const reasons = [
        ...(isWrite && route.lockdown !== 'exempt'
          ? ['BILLING_LOCKED: the team is locked for an unpaid invoice of its own tier']
          : []),
        ...(route.tierLimit
          ? [`TIER_LIMIT_REACHED: the team's tier allows no more ${route.tierLimit.replaceAll('_', ' ')}`]
          : []),
      ];
      responses['402'] = problemResponse(`${reasons.join('; or ')}.`);
    }
    if (isWrite) {
      responses['409'] = problemResponse('IDEMPOTENCY_KEY_IN_USE or CONFLICT.');
      responses['413'] = problemResponse(`PAYLOAD_TOO_LARGE: the body is larger than ${MAX_BODY_BYTES / 1024} KiB.`);
      responses['415'] = problemResponse('UNSUPPORTED_MEDIA_TYPE: send the body as `application/json`.');
    }
    responses['431'] = {
      description: 'Request header fields too large (the server refuses the request before reading it).',
    };
    const operation: Record<string, unknown> = {
      operationId: route.id,
      summary: route.summary,
      ...(route.teamWide
        ? { description: 'Team-wide data: a token narrowed by `scope:project:<uuid>` gets 403 TOKEN_MISSING_ABILITY.' }
        : {}),
      tags: [route.tag],
      'x-required-scopes': route.ability && route.ability !== AUTHENTICATED ? [route.ability] : [],
      security: route.ability ? [{ bearerAuth: [] }] : [],
      requestParams: {
        ...(route.params ? { path: route.params } : {}),
        ...(route.query ? { query: route.query } : {}),
      },
      parameters: isWrite
        ? [
            {
              name: 'Idempotency-Key',
              in: 'header',
              required: false,
              description:
                route.idempotency === 'in-transaction'
                  ? 'A UUID; a retry with the same key and the same request replays the first response (with `Idempotent-Replay: true`), also while the first still runs (the retry replays it once the first committed; one effect); the key with another request 422. Keys are kept 24 hours.'
                  : 'A UUID; a retry with the same key and the same request replays the first response (with `Idempotent-Replay: true`); a retry while the first still runs is 409, the key with another request 422. Keys are kept 24 hours.',
              schema: { type: 'string', format: 'uuid' },
            },
          ]
        : undefined,
      ...(body
        ? { requestBody: { required: !body.safeParse({}).success, content: { 'application/json': { schema: body } } } }
        : {}),
      responses,
    };
    (paths[route.rest.path] ??= {})[route.rest.method.toLowerCase()] = operation;
  }
  const document = createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Membership Service API',
        version: API_VERSION,
        license: { name: 'Proprietary', url: 'https://docs.membership.example/license' },
        description:
          'REST API of the membership service. Every request except the two public documents needs `Authorization: Bearer svc_live_<id>_<secret>`; each operation names the ability it needs in `x-required-scopes`. Names, descriptions, labels and reasons are text: control characters (NUL included) and unpaired surrogates are refused with 422 VALIDATION_FAILED naming the field. Errors are RFC 9457 problem documents; codes: ' +
          ERROR_CODES.map((entry) => `${entry.code} (${entry.status})`).join(', ') +
          '.',
      },
      servers: [{ url: '/', description: 'The API’s own base URL ({base_url}).' }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: '`svc_live_<id>_<secret>`' } },
      },
      paths: paths,
      webhooks: webhooksSection() as never,
    },
    { override: describeTrimmedInput },
  );
  addExamples(document as unknown as OpenApiJson);
  return document;
}

/**
 * The OpenAPI 3.1 `webhooks` section: one entry per event of the catalogue, a POST
 * whose body is that event's envelope with its own `data` schema, signed as the interface says.
 */
function webhooksSection(): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENTS.map((definition) => [
      definition.name,
      {
        post: {
          operationId: `webhook.${definition.name}`,
          summary: `${definition.name} (minimum subscribing ability: ${definition.minimum_ability})`,
          tags: ['Webhooks'],
          // Sent by the service, not called with a token: the receiver checks the signature instead.
          security: [],
          description:
            'Sent to each subscribed endpoint. Headers: `SVC-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` keyed with the endpoint secret, `SVC-Event-Id` (the envelope `id`) and `SVC-Event-Name` (the envelope `type`); and the Standard Webhooks headers `webhook-id`, `webhook-timestamp` and `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">` keyed with the base64-decoded secret after `whsec_`. Answer 2xx within 10 seconds.',
          requestBody: { required: true, content: { 'application/json': { schema: envelopeSchemaOf(definition) } } },
          responses: {
            '200': {
              description:
                'Any 2xx: delivered. Anything else, a timeout, a TLS or DNS failure: retried on the timeline (8 attempts).',
            },
          },
        },
      },
    ]),
  );
}

type OpenApiJson = {
  paths: Record<string, Record<string, { requestBody?: MediaOwner; responses?: Record<string, MediaOwner> }>>;
} & Record<string, unknown>;
type MediaOwner = { content?: Record<string, { schema?: unknown; example?: unknown }> };

/** Gives every request body and response of every operation an `example`, sampled from its schema (openapi-sampler). */
function addExamples(document: OpenApiJson): void {
  const fill = (owner: MediaOwner | undefined) => {
    for (const media of Object.values(owner?.content ?? {})) {
      if (media.schema && media.example === undefined)
        media.example = sample(media.schema, { skipReadOnly: false, skipNonRequired: false }, document);
    }
  };
  for (const operations of Object.values(document.paths)) {
    for (const operation of Object.values(operations)) {
      fill(operation.requestBody);
      for (const response of Object.values(operation.responses ?? {})) fill(response);
    }
  }
}
