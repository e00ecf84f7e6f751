// Runs in every test file (vitest setupFiles): after the file's own afterAll hooks, nothing it opened
// through the helpers may still be open.
import { afterAll } from 'vitest';
import { stillOpen } from './open-resources.ts';

afterAll(() => {
  const leaked = stillOpen();
  if (leaked.length > 0) throw new Error(`left open after the tests of this file: ${leaked.join(', ')} — close them in afterAll`);
});
