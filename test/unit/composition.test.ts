// The composition root builds every long-lived part, and only its lifecycle runs them: a context never
// started — the CLI's — holds no render thread and no LISTEN; started, it holds both; stopped, neither, and
// a held long poll is answered before the server's drain begins (docs/architecture.md, "Lifecycle").
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createAppContext } from '../../src/composition.ts';
import { loadConfig } from '../../src/config.ts';
import { AUTH_CHANGED_CHANNEL } from '../../src/merchants/service.ts';
import { QR_CHANGED_CHANNEL } from '../../src/qr/lookup.ts';
import { TestClock } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.ts';

/** Render pools made and closed: RenderPool's constructor spawns its threads. */
const pools = vi.hoisted(() => ({ made: 0, closed: 0 }));
vi.mock('../../src/qr/png.ts', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/qr/png.ts')>();
  class CountedRenderPool extends real.RenderPool {
    constructor(size?: number) {
      super(size);
      pools.made++;
    }
    override async close(): Promise<void> {
      pools.closed++;
      await super.close();
    }
  }
  return { ...real, RenderPool: CountedRenderPool };
});

describe('the lifecycle of the AppContext\'s long-lived parts', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('pglite');
  });
  afterAll(() => database.drop());

  const newContext = () => createAppContext({ config: loadConfig({ DATABASE_URL: 'memory://', LOG_LEVEL: 'silent' }), db: database.db, clock: new TestClock() });
  const listening = async () => (await database.db.query<{ channel: string }>('select pg_listening_channels() as channel')).rows.map((row) => row.channel).sort();

  it('a context never started (the CLI\'s) spawns no render thread and listens on nothing, and still renders a QR image', async () => {
    const before = pools.made;
    const context = newContext();
    expect(await context.renderQrImage('000201')).toMatch(/^data:image\/png;base64,/);
    expect(pools.made).toBe(before);
    expect(await listening()).toEqual([]);
  });

  it('started once, runs the render threads and the LISTENs of the QR read model and the key cache; stopped, leaves none', async () => {
    const context = newContext();
    const { made, closed } = pools;
    await context.lifecycle.start();
    await context.lifecycle.start();
    try {
      expect(pools.made).toBe(made + 1);
      expect(await listening()).toEqual([AUTH_CHANGED_CHANNEL, QR_CHANGED_CHANNEL].sort());
      expect(await context.renderQrImage('000201')).toMatch(/^data:image\/png;base64,/);
    } finally {
      await context.lifecycle.stop();
    }
    expect(pools.closed).toBe(closed + 1);
    expect(await listening()).toEqual([]);
  });

  it('answers a held long poll before the drain, and closes the render threads only after it', async () => {
    const context = newContext();
    const closed = pools.closed;
    await context.lifecycle.start();
    let answered = false;
    const held = context.qrReads.watcher.waitForChange('0b7c3f5e-6a7d-4f5b-9a41-3c2d1e0f9a8b', 30_000).then(() => { answered = true; });
    const seenByDrain: Array<{ answered: boolean; poolsClosed: number }> = [];
    await context.lifecycle.stop(async () => {
      await Promise.resolve();
      seenByDrain.push({ answered, poolsClosed: pools.closed - closed });
    });
    await held;
    expect(seenByDrain).toEqual([{ answered: true, poolsClosed: 0 }]);
    expect(pools.closed - closed).toBe(1);
  });
});
