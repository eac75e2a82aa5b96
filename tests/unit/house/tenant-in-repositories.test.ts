/**
 * The house rule "every repository function takes the tenant" (docs/architecture.md), executed: every
 * function a module's repository exports has a parameter that names the tenant, a `tenantId` or a value
 * whose type carries one (a row with `tenant_id`, a reference with `tenantId`), so that a query cannot
 * forget to scope itself by the tenant it was given. The functions that are not a tenant's by design (the
 * operator's views over every tenant, the delivery worker's and the listener hub's work by id, the token
 * endpoint's lookup by client id, the tenants themselves) are listed below, each with its reason; a new
 * one fails here until it takes the tenant or joins the list, and an entry whose function is gone fails too.
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const MODULES = path.join(ROOT, 'src', 'modules');

/** `file (from src/modules) → function → why it takes no tenant`. */
const NOT_A_TENANTS: Record<string, Record<string, string>> = {
  'auth/repository.ts': {
    findActiveCredential: 'the token endpoint finds the tenant by the client id it was sent',
  },
  'tenants/repository.ts': {
    findTenant: 'the tenant itself, by its id',
    lockTenant: 'the tenant itself, by its id',
    updateTenant: 'the tenant itself, by its id',
    listTenants: "the operator's list of every tenant",
    countTenants: "the operator's count of every tenant",
    addStorageUse: 'the tenant itself, by its id: what its files hold',
  },
  'messages/repository.ts': {
    findMessageTenantId:
      "the operator's attachment download knows the message's id only: this finds its tenant, which every later read takes",
    inboxStatement: "the operator's inbox, over every tenant unless its filter names one",
    listInbox: "the operator's inbox, over every tenant unless its filter names one",
    findMessageSeq: "the operator's inbox's cursor position, by message id",
    countUnhandledStatement:
      "the operator's count of unhandled messages, over every tenant unless its filter names one",
    countUnhandled: "the operator's count of unhandled messages, over every tenant unless its filter names one",
    lockMessageVersions: "the operator's marking of messages handled, by message id across tenants",
    setHandled: "the operator's marking of messages handled, by message id across tenants",
  },
  'site-visits/repository.ts': {
    findVisitTenantId:
      "the operator's visit routes know the visit's id only: this finds its tenant, which every later read takes",
  },
  'outbox/repository/history.ts': {
    purgeDeliveriesChunk: "the retention's walk over every tenant's deliveries, in the order they were written",
    listTenantIds: "the retention walks each tenant's events along the tenant's own index",
    purgeClosedListeners: "the retention's purge of every tenant's closed listeners",
  },
  'outbox/repository/attempts.ts': {
    recordAttempts: "the delivery worker's outcomes, by delivery id, for deliveries of every tenant it claimed",
    recordStatement: 'one outcome of recordAttempts, by delivery id',
    recordSubscriptionSuccess: "the worker's health record of a subscription it delivered to, by id",
    recordSubscriptionFailure: "the worker's health record of a subscription it delivered to, by id",
  },
  'outbox/repository/operator-views.ts': {
    listDeliveries: "the operator's delivery list, over every tenant unless its filter names one",
    deliverySeq: "the operator's delivery list's cursor position, by delivery id",
    countFailedDeliveries: "the operator's count, over every tenant unless its filter names one",
    findDelivery: "the operator's delivery view, by id",
    reopenFailedDelivery: "the operator's retry of a delivery, by id",
    reopenFailedDeliveries: "the operator's retry of failed deliveries, over every tenant unless its filter names one",
  },
  'outbox/repository/queue.ts': {
    failExhaustedLeases: "the worker's sweep of leases that ran out, over every tenant",
  },
  'webhook-listeners/repository.ts': {
    listenerState: 'the delivery worker, before an attempt to a listener of any tenant, by the id it claimed',
    renewStreams: "the listener hub's keep-alive of the streams this process holds, by stream id",
    detachStream: 'the listener hub, when a stream it holds ends, by listener and stream id',
    resumeDeliveries: "the listener hub's resume of a listener's deliveries, by the ids it holds",
    closeListeners: "the maintenance's close of listeners past their grace, over every tenant",
    loadAttempt: "the listener hub's attempt, by the delivery id the worker handed it",
  },
};

function repositoryFiles(): string[] {
  const files: string[] = [];
  for (const module of readdirSync(MODULES)) {
    const file = path.join(MODULES, module, 'repository.ts');
    if (statSync(file, { throwIfNoEntry: false })?.isFile()) files.push(file);
    const folder = path.join(MODULES, module, 'repository');
    if (statSync(folder, { throwIfNoEntry: false })?.isDirectory())
      for (const name of readdirSync(folder)) if (name.endsWith('.ts')) files.push(path.join(folder, name));
  }
  return files;
}

function program(files: string[]): ts.Program {
  const configFile = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, ROOT);
  return ts.createProgram(files, { ...parsed.options, noEmit: true });
}

/** Whether a parameter names the tenant: by its name, or by a required member of its type (a row, a reference). */
function namesTenant(checker: ts.TypeChecker, parameter: ts.ParameterDeclaration): boolean {
  if (ts.isIdentifier(parameter.name) && /^tenantId$|^tenant$/.test(parameter.name.text)) return true;
  if (ts.isObjectBindingPattern(parameter.name) && parameter.name.elements.some((e) => e.name.getText() === 'tenantId'))
    return true;
  const type = checker.getTypeAtLocation(parameter);
  // A member the type requires: an optional one (a filter's) may leave the query over every tenant.
  const required = (candidate: ts.Type, name: string) => {
    const member = candidate.getProperty(name);
    return member !== undefined && (member.flags & ts.SymbolFlags.Optional) === 0;
  };
  const carries = (candidate: ts.Type) => required(candidate, 'tenant_id') || required(candidate, 'tenantId');
  if (carries(type)) return true;
  // An array of rows (a batch) carries the tenant in each.
  const element = checker.isArrayType(type) ? checker.getTypeArguments(type as ts.TypeReference)[0] : undefined;
  return element !== undefined && carries(element);
}

/** `file → exported functions that name no tenant`. */
function functionsWithoutTenant(): Record<string, string[]> {
  const files = repositoryFiles();
  const built = program(files);
  const checker = built.getTypeChecker();
  const found: Record<string, string[]> = {};
  for (const file of files) {
    const source = built.getSourceFile(file)!;
    const relative = path.relative(MODULES, file).split(path.sep).join('/');
    for (const statement of source.statements) {
      if (!ts.isFunctionDeclaration(statement) || !statement.name) continue;
      if (!statement.modifiers?.some((modifier) => modifier.kind === ts.SyntaxKind.ExportKeyword)) continue;
      if (statement.parameters.some((parameter) => namesTenant(checker, parameter))) continue;
      found[relative] = [...(found[relative] ?? []), statement.name.text];
    }
  }
  return found;
}

describe('house rule: every repository function takes the tenant', () => {
  it('or is listed with the reason it serves no single tenant', { timeout: 60_000 }, () => {
    const found = functionsWithoutTenant();
    const unlisted = Object.entries(found).flatMap(([file, names]) =>
      names.filter((name) => !NOT_A_TENANTS[file]?.[name]).map((name) => `${file} ${name}`),
    );
    expect(
      unlisted,
      'repository functions that take no tenant: take the tenant id, or list the function with its reason',
    ).toEqual([]);
    const stale = Object.entries(NOT_A_TENANTS).flatMap(([file, names]) =>
      Object.keys(names)
        .filter((name) => !found[file]?.includes(name))
        .map((name) => `${file} ${name}`),
    );
    expect(stale, 'listed functions that now take the tenant, or are gone: remove them from the list').toEqual([]);
  });
});
