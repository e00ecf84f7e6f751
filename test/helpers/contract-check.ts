// The contract check every test request goes through (test/helpers/app.ts): the service's answer must be
// what its own /openapi.json promises — a documented status, a body that matches the documented schema
// (JSON Schema 2020-12, checked by Ajv), the headers the HTTP layer sets (ETag, Idempotent-Replayed,
// Retry-After, RateLimit-*, X-Request-Id) documented for that answer, and no body required by the
// document that the service does not need. A violation fails the test that made the request, so the
// document can never drift from the service. Hosted HTML pages are hidden from the document and not checked.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
const addFormats = addFormatsModule.default;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface ExchangeForCheck {
  method: string;
  path: string;
  sentBody: boolean;
  status: number;
  headers: Headers;
  contentType: string;
  body: unknown;
}

const CHECKED_HEADERS = ['ETag', 'Idempotent-Replayed', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'X-Request-Id'];

interface Operation {
  template: string;
  pattern: RegExp;
  method: string;
  operation: Json;
}

export class ContractChecker {
  private readonly ajv: Ajv2020;
  private readonly operations: Operation[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json) {
    this.ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv as never);
    this.ajv.addSchema(document, 'openapi');
    this.operations = Object.entries<Json>(document.paths).flatMap(([template, methods]) =>
      Object.entries<Json>(methods).map(([method, operation]) => ({
        template,
        method: method.toUpperCase(),
        operation,
        pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      })));
  }

  /** The documented operation a request is for ("POST /api/v2/transfers/{id}/cancel"), or null. */
  operationOf(method: string, requestPath: string): string | null {
    const path = normalPath(requestPath);
    if (isFixture(path)) return null;
    const found = this.find(method, path).found;
    return found ? `${found.method} ${found.template}` : null;
  }

  /** What is wrong with this exchange by the document (empty: nothing). */
  check(exchange: ExchangeForCheck): string[] {
    const path = normalPath(exchange.path);
    if (isFixture(path)) return [];
    const { candidates, found } = this.find(exchange.method, path);
    if (candidates.length === 0) return []; // not a documented path (a hosted page, /docs, an unknown route)
    const where = `${exchange.method} ${path} → ${exchange.status}`;
    if (!found) return exchange.status === 404 || exchange.status === 405 ? [] : [`${where}: the method is not documented for ${candidates[0]!.template}`];
    const { operation, template, method } = found;
    const problems: string[] = [];
    if (operation.requestBody?.required && !exchange.sentBody && exchange.status < 300) {
      problems.push(`${where}: the document requires a body, the service answered ${exchange.status} without one`);
    }
    const documented = operation.responses?.[String(exchange.status)] ?? operation.responses?.default;
    if (!documented) return [...problems, `${where}: status ${exchange.status} is not documented for ${method} ${template}`];
    // An error response is shared: `{ $ref: '#/components/responses/…' }` (src/http/openapi.ts).
    const response: Json = typeof documented.$ref === 'string' ? this.resolve(documented.$ref) : documented;
    for (const name of CHECKED_HEADERS) {
      if (exchange.headers.has(name) && !Object.keys(response.headers ?? {}).some((h) => h.toLowerCase() === name.toLowerCase())) {
        problems.push(`${where}: header ${name} is sent but not documented`);
      }
    }
    const media = response.content?.['application/json'];
    const mediaType = exchange.contentType.split(';')[0]!.trim();
    if (mediaType !== '' && response.content && !(mediaType in response.content)) {
      problems.push(`${where}: ${mediaType} is sent where the document promises ${Object.keys(response.content).join(', ')}`);
    }
    if (exchange.contentType.includes('json') && media?.schema) {
      const validate = this.validatorFor(typeof documented.$ref === 'string'
        ? `openapi${documented.$ref}`
        : `openapi#/paths/${template.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${documented === operation.responses?.default ? 'default' : exchange.status}`);
      if (!validate(exchange.body)) {
        problems.push(`${where}: the body does not match the documented schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' })}`);
      }
    } else if (exchange.contentType.includes('json') && !media && exchange.status !== 304) {
      problems.push(`${where}: a JSON body is sent where the document promises none`);
    }
    return problems;
  }

  private find(method: string, path: string): { candidates: Operation[]; found: Operation | undefined } {
    const candidates = this.operations.filter((op) => op.pattern.test(path));
    // A literal segment beats a parameter: /api/v2/balance/statement is not /api/v2/balance/{x}.
    const found = candidates.filter((op) => op.method === method)
      .sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0))[0];
    return { candidates, found };
  }

  /** `#/components/responses/Name` → that object of the document. */
  private resolve(ref: string): Json {
    const found = ref.replace(/^#\//, '').split('/').reduce<Json | undefined>(
      (node, part) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], this.document);
    if (found === undefined) throw new Error(`the document's ${ref} is not there`);
    return found;
  }

  /** `response`: the JSON pointer (with its `openapi` base) of the documented response. */
  private validatorFor(response: string): ValidateFunction {
    const pointer = `${response}/content/application~1json/schema`;
    const known = this.validators.get(pointer);
    if (known) return known;
    const validate = this.ajv.compile({ $ref: pointer });
    this.validators.set(pointer, validate);
    return validate;
  }
}

/** The router ignores the query and one trailing slash: /api/v2/transfers/?limit=1 is /api/v2/transfers. */
function normalPath(requestPath: string): string {
  return requestPath.split('?')[0]!.replace(/(.)\/$/, '$1');
}

/** Routes the tests add to the app (helpers/fixture-routes.ts and the like) are not the service's. */
function isFixture(path: string): boolean {
  return path.startsWith('/test/');
}

const checkers = new Map<string, ContractChecker>();

/** One checker per distinct document (sandbox and live, with or without the operator API, differ). */
export function contractCheckerFor(document: Json): ContractChecker {
  const key = JSON.stringify(document);
  let checker = checkers.get(key);
  if (!checker) {
    checker = new ContractChecker(document);
    checkers.set(key, checker);
  }
  return checker;
}
