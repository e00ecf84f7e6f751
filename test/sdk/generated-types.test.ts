// The SDK's types (sdk/src/generated/openapi.ts) are what openapi-typescript makes of the document the
// service serves: regenerate with `npm run sdk:types` when this fails.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceOpenApiDocument } from '../../scripts/openapi-document.ts';
import { generatedSdkTypes, SDK_TYPES_PATH } from '../../scripts/sdk-types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

describe('the SDK types', () => {
  let t: TestApp;
  beforeAll(async () => {
    // The defaults of docs/configuration.md (the test helper turns rate limits off; they add the 429s).
    t = await startTestApp({ kind: 'pglite', env: { RATE_LIMIT: '100/s,200', PUBLIC_RATE_LIMIT: '20/s,40' } });
  });
  afterAll(() => t.close());

  it('are generated from the same document a running service serves at /openapi.json', async () => {
    const served = (await t.request('GET', '/openapi.json')).body;
    // Less the operator API: it exists only where ADMIN_TOKEN is set (the tests set it), and is no part of the SDK.
    for (const path of Object.keys(served.paths)) if (path.startsWith('/admin/')) delete served.paths[path];
    served.tags = served.tags.filter((tag: { name: string }) => tag.name !== 'operator');
    // And the error responses only the operator API refers to (Operator…: src/http/openapi.ts shares them).
    const referred = JSON.stringify(served.paths);
    for (const name of Object.keys(served.components.responses)) {
      if (!referred.includes(`"#/components/responses/${name}"`)) delete served.components.responses[name];
    }
    expect(await serviceOpenApiDocument()).toEqual(served);
  });

  it('match the checked-in sdk/src/generated/openapi.ts (npm run sdk:types)', async () => {
    expect(await generatedSdkTypes(), 'sdk/src/generated/openapi.ts is stale: run npm run sdk:types').toBe(readFileSync(SDK_TYPES_PATH, 'utf8'));
  });
});
