// ESLint flat config: typescript-eslint's type-checked recommended rules over the TypeScript sources,
// the plain recommended rules over the JavaScript files (the example client and this file).
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Keys of a DynamoDB request that carry expressions (a selector regex of esquery). */
const DYNAMODB_REQUEST_KEYS =
  '/^((KeyCondition|Update|Condition|Filter|Projection)Expression|ExpressionAttribute(Names|Values)|IndexName)$/';
/** DynamoDB expression syntax inside a string: functions, and update clauses that open a string. */
const DYNAMODB_EXPRESSION =
  '/attribute_(not_)?exists\\(|attribute_type\\(|begins_with\\(|if_not_exists\\(|list_append\\(|^\\s*(SET|ADD|REMOVE|DELETE) [#:a-z]/';
const DOMAIN_TERMS =
  "DynamoDB lives only under shared/store/: put expressions, keys of requests and AWS SDK imports in the object's store adapter there (or an AWS adapter under shared/aws/; DESIGN D14, D35).";
/** The selectors of DynamoDB's request keys and expression syntax (see DOMAIN_TERMS). */
const DYNAMODB_SYNTAX = [
  { selector: `Property[key.name=${DYNAMODB_REQUEST_KEYS}]`, message: DOMAIN_TERMS },
  { selector: `Literal[value=${DYNAMODB_EXPRESSION}]`, message: DOMAIN_TERMS },
  { selector: `TemplateElement[value.raw=${DYNAMODB_EXPRESSION}]`, message: DOMAIN_TERMS },
];

export default defineConfig(
  { ignores: ['node_modules/', 'cdk.out/', 'dist/', 'coverage/', '.data/', '.receiver/', 'test-results/'] },
  {
    files: ['**/*.{ts,tsx}'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['vitest.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // `_name` parameters fill a fixed signature; `{ field: _field, ...rest }` drops a field from a copy.
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // Ports, adapters, fakes and handlers implement Promise-returning signatures with `async` so a throw is a
      // rejection; dropping `async` would change that.
      '@typescript-eslint/require-await': 'off',
      // TypeScript finds a custom JSX factory's element types only in a declared `h.JSX` namespace
      // (shared/web/html.ts).
      '@typescript-eslint/no-namespace': ['error', { allowDeclarations: true }],
      // As only-throw-error does by default: forwarding a caught error or an AbortSignal's reason (typed unknown/any)
      // is not a new non-Error rejection.
      '@typescript-eslint/prefer-promise-reject-errors': [
        'error',
        { allowThrowingAny: true, allowThrowingUnknown: true },
      ],
      // Prettier wraps code at 120 characters but leaves comments and strings as written: comments wrap too.
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreRegExpLiterals: true, ignoreUrls: true },
      ],
    },
  },
  {
    // The domain calls repository methods in domain terms; DynamoDB's SDK types stay in the store adapter
    // (shared/store/) and the AWS adapters (shared/aws/). The tests, bench and fixtures listed read or
    // write the raw tables (scans, batch writes, request counters) on purpose.
    files: ['**/*.{ts,tsx}'],
    ignores: [
      'shared/store/**',
      'shared/aws/**',
      'bench/own-requests.ts',
      'bench/replay.ts',
      'bench/seeding.ts',
      'test/support/guarantees.ts',
      'test/support/store.ts',
      'test/unit/aws-adapters.test.ts',
      'test/e2e/mcp-protocol-transport.test.ts',
      'test/support/fixtures/access-codes.ts',
      'test/integration/activity.test.ts',
      'test/integration/demo-data.test.ts',
      'test/integration/fan-out-stream.test.ts',
      'test/integration/metrics-recount.test.ts',
      'test/integration/store.test.ts',
      'test/integration/webhook-delivery-retries.test.ts',
      'test/support/fixtures/webhook-delivery.ts',
      'test/integration/webhook-endpoint-secrets.test.ts',
    ],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@aws-sdk/*dynamodb*'],
              message:
                'DynamoDB SDK types stay in shared/store/ and shared/aws/: the domain calls repository methods in domain terms, and the Store port takes its own request types (shared/store/requests.ts).',
            },
          ],
        },
      ],
    },
  },
  {
    // DynamoDB only under shared/store/ (DESIGN D14, D35): the domain, the surfaces, the jobs, the Lambda handlers, the
    // CLI and the stack write no DynamoDB expression or request key and import no AWS SDK; the store adapters
    // (shared/store/) and the AWS adapters (shared/aws/) do. No file is exempt.
    files: ['shared/**/*.{ts,tsx}', 'functions/**/*.{ts,tsx}', 'bin/**/*.{ts,tsx}', 'lib/**/*.{ts,tsx}'],
    ignores: ['shared/store/**', 'shared/aws/**'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['@aws-sdk/*'], message: DOMAIN_TERMS }] }],
      'no-restricted-syntax': ['error', ...DYNAMODB_SYNTAX],
    },
  },
  {
    // Surface modules (hooks, public pages, HTTP, authentication, OAuth, MCP, the dashboard, the web layer, Lambda
    // handlers) call repository and store adapter functions in domain terms, never a Store method. No file is exempt.
    files: [
      'shared/hooks/**/*.{ts,tsx}',
      'shared/public-pages/**/*.{ts,tsx}',
      'shared/http/**/*.{ts,tsx}',
      'shared/auth/**/*.{ts,tsx}',
      'shared/oauth/**/*.{ts,tsx}',
      'shared/mcp/**/*.{ts,tsx}',
      'shared/dashboard/**/*.{ts,tsx}',
      'shared/web/**/*.{ts,tsx}',
      'functions/**/*.{ts,tsx}',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.property.name=/^(get|put|update|delete|query|batchGet|transactWrite)$/]:matches([callee.object.name='store'], [callee.object.property.name='store'])",
          message:
            'Surface modules call no Store method (store.get/put/update/delete/query/batchGet/transactWrite): move the read or write into a named function of the module that owns the item (its store adapter or repository).',
        },
        ...DYNAMODB_SYNTAX,
      ],
    },
  },
  {
    files: ['test/**/*.{ts,tsx}'],
    // Tests assert on untyped JSON (response bodies, documents, fake Stripe form params) and vitest's `expect.any`, all
    // `any`: typing each would add casts, not checks.
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['**/*.{js,mjs}'],
    extends: [js.configs.recommended],
    // The Node globals these scripts use (no `globals` package for a handful of names).
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', fetch: 'readonly', setTimeout: 'readonly' },
    },
  },
);
