// The layering of src/ (docs/architecture.md#layout), checked on the import statements themselves: the
// kernel and the database adapters import no capability; no capability's service, store or view imports
// routes, pages, the HTTP layer or the composition root; nothing but the entry points imports those; the rails
// sit below the capabilities, and only the composition root picks one. Read from the source as well: only
// services open transactions (routes and the CLI call a service that takes the Database).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const CAPABILITIES = ['bank', 'console', 'events', 'idempotency', 'ledger', 'merchants', 'onboarding', 'payouts', 'qr', 'refunds', 'transfers', 'users', 'webhooks'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? sourceFiles(full) : entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** Each file of src/ (relative, with /) and the src-relative paths it imports. */
const graph = sourceFiles(SRC).map((file) => {
  const text = readFileSync(file, 'utf8');
  const revealsAccountNumbers = /\brevealAccountNumber\(/.test(text);
  const opensTransactions = /\.transaction\(/.test(text);
  const imports = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+'(\.[^']+)'/gms)]
    .map((match) => path.relative(SRC, path.resolve(path.dirname(file), match[1]!)).split(path.sep).join('/'));
  return { file: path.relative(SRC, file).split(path.sep).join('/'), imports, revealsAccountNumbers, opensTransactions };
});

function violations(isFrom: (file: string) => boolean, isForbidden: (target: string) => boolean): string[] {
  return graph.filter(({ file }) => isFrom(file)).flatMap(({ file, imports }) => imports.filter(isForbidden).map((target) => `${file} → ${target}`));
}

const inCapability = (file: string) => CAPABILITIES.some((name) => file.startsWith(`${name}/`));
const isRouteFile = (file: string) => /(^|\/)(routes|admin-routes|events-routes)\.ts$/.test(file) || file.includes('/pages/') || file.endsWith('/http.ts');
const isTop = (file: string) => file.startsWith('http/') || file.startsWith('workers/') || file.startsWith('cli/')
  || ['composition.ts', 'startup.ts', 'main.ts'].includes(file);

describe('the layers of src/', () => {
  it('finds the source files and their imports', () => {
    expect(graph.length).toBeGreaterThan(50);
    expect(graph.find(({ file }) => file === 'qr/service.ts')?.imports).toContain('qr/store.ts');
  });

  it('keeps the kernel and the database adapters free of capabilities and of the HTTP layer', () => {
    const isFoundation = (file: string) => file.startsWith('kernel/') || file.startsWith('db/');
    expect(violations(isFoundation, (target) => inCapability(target) || isTop(target) || target === 'context.ts')).toEqual([]);
  });

  it('never lets a capability\'s service, store, state or views import routes, pages, the HTTP layer or the composition root', () => {
    const isCore = (file: string) => inCapability(file) && !isRouteFile(file);
    expect(violations(isCore, (target) => isRouteFile(target) || isTop(target))).toEqual([]);
  });

  it('lets only the entry points import the composition root and the app', () => {
    const entry = (file: string) => ['startup.ts', 'main.ts'].includes(file) || file.startsWith('cli/') || file.startsWith('http/');
    expect(violations((file) => !entry(file), (target) => target === 'composition.ts' || target === 'http/app.ts')).toEqual([]);
  });

  it('lets services open transactions, never routes, pages, the HTTP layer or the CLI: they call a service that takes the Database', () => {
    const openers = graph.filter(({ opensTransactions }) => opensTransactions).map(({ file }) => file);
    expect(openers).toContain('qr/service.ts');
    const isCaller = (file: string) => isRouteFile(file) || file.startsWith('http/') || file.startsWith('cli/');
    expect(openers.filter(isCaller)).toEqual([]);
  });

  it('lets only stores (to write it) and rails (to pay to it) open a full account number', () => {
    const openers = graph.filter(({ file, revealsAccountNumbers }) => revealsAccountNumbers && file !== 'masking.ts').map(({ file }) => file);
    expect(openers.length).toBeGreaterThan(0);
    expect(openers.filter((file) => !/(^|\/)store\.ts$/.test(file) && !file.startsWith('rails/'))).toEqual([]);
  });

  it('keeps the rails below the capabilities: a rail imports no capability, HTTP layer or composition root', () => {
    const inRails = (file: string) => file.startsWith('rails/');
    expect(graph.filter(({ file }) => inRails(file)).length).toBeGreaterThan(5);
    expect(violations(inRails, (target) => inCapability(target) || isTop(target) || target === 'context.ts')).toEqual([]);
  });

  it('lets only the composition root pick a rail: others use the interfaces of src/rails/, never a rail\'s folder', () => {
    const isRailImplementation = (target: string) => /^rails\/[^/]+\//.test(target);
    const outsideTheRail = (file: string) => file !== 'composition.ts' && !file.startsWith('rails/');
    expect(violations(outsideTheRail, isRailImplementation)).toEqual([]);
  });
});
