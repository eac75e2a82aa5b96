/**
 * The layering rules of docs/architecture.md ("The rules `npm run check` enforces"), checked by
 * dependency-cruiser on every `npm run check`. Each rule's comment is what a violation prints.
 * @type {import('dependency-cruiser').IConfiguration}
 */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment:
        'Imports run one way: a cycle means two modules are one, or one of them should receive the other as a dependency.',
      from: {},
      to: { circular: true, dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'http-imports-no-module',
      severity: 'error',
      comment:
        'src/http/ holds the cross-cutting HTTP protocols; it knows no resource module (modules plug into it, e.g. through an interface in src/http/ that app.ts fills).',
      from: { path: '^src/http/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'no-foreign-repository',
      severity: 'error',
      comment:
        'A module reaches another through its service (or its schemas and types), never through its repository: the owning service keeps its rules.',
      from: { path: '^src/modules/([^/]+)/' },
      to: { path: '^src/modules/([^/]+)/repository', pathNot: '^src/modules/$1/' },
    },
    {
      name: 'outbox-knows-no-target-api',
      severity: 'error',
      comment:
        'The outbox (events, the delivery queue, the worker) sits below the APIs that configure its targets: webhook-subscriptions and webhook-listeners import the outbox, never the reverse (a listener relay reaches the worker through the composition root).',
      from: { path: '^src/modules/outbox/' },
      to: { path: '^src/modules/(webhook-subscriptions|webhook-listeners)/' },
    },
    {
      name: 'subscriptions-know-no-listeners',
      severity: 'error',
      comment:
        'webhook-listeners uses webhook-subscriptions (the webhook-access check); webhook-subscriptions never imports webhook-listeners.',
      from: { path: '^src/modules/webhook-subscriptions/' },
      to: { path: '^src/modules/webhook-listeners/' },
    },
    {
      name: 'runtime-only-from-the-composition-root',
      severity: 'error',
      comment:
        'src/runtime/ (process start: keys, sandbox provisioning, metrics server, maintenance) is used by the composition root (server.ts, app.ts, app-context.ts, openapi-documents.ts) alone; below it, type-only imports are allowed.',
      from: { path: '^src/', pathNot: ['^src/runtime/', '^src/(server|app|app-context|openapi-documents)\\.ts$'] },
      to: { path: '^src/runtime/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'src-is-not-a-test',
      severity: 'error',
      comment: 'Production code never imports tests or their helpers.',
      from: { path: '^src/' },
      to: { path: '^(tests|bench)/' },
    },
    {
      name: 'no-dev-dependencies-in-src',
      severity: 'error',
      comment: 'Production code runs without devDependencies (npm ci --omit=dev).',
      from: { path: '^src/', pathNot: '^src/(openapi-cli|db/migrate-cli)\\.ts$' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that does not resolve.',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
    },
  },
};
