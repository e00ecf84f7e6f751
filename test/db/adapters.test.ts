// The two Database adapters (docs/architecture.md#stack-pitfalls): the same SQL returns the same JS types on PGlite
// and PostgreSQL, int8 past 2^53 throws instead of losing centavos, PGlite refuses a re-entrant query
// instead of hanging, notifications leave only after commit, and CHECK violations carry their names.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseErrorOf, SqlState, TransactionEndedError, type Database, type Transaction } from '../../src/db/database.ts';
import { openPglite, ReentrantQueryError } from '../../src/db/pglite.ts';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.ts';

/** The platform's own merchant account, created by migration 001. */
const PLATFORM_BUSINESS_CODE = 1000;

const TYPES_SQL = `
  select 42::int8 as int8_value, -7::int8 as negative_int8, 7::int4 as int4_value, 3::int2 as int2_value,
         12.50::numeric as numeric_value, 0.1::numeric(12, 2) as numeric_scaled,
         '2026-11-22T22:41:39.123Z'::timestamptz as timestamptz_value,
         '{"a": 1, "b": [true, null, "x"], "c": {"d": 1.5}}'::jsonb as jsonb_value,
         '{"x": 1}'::json as json_value, '[1, 2]'::jsonb as jsonb_array,
         true as true_value, false as false_value, 'texto ñ'::text as text_value,
         null::int8 as null_int8, null::numeric as null_numeric, null::jsonb as null_jsonb`;

function expectCanonicalTypes(row: Record<string, unknown>): void {
  expect(row.int8_value).toBe(42);
  expect(row.negative_int8).toBe(-7);
  expect(row.int4_value).toBe(7);
  expect(row.int2_value).toBe(3);
  expect(row.numeric_value).toBe('12.50');
  expect(row.numeric_scaled).toBe('0.10');
  expect(row.timestamptz_value).toBeInstanceOf(Date);
  expect((row.timestamptz_value as Date).toISOString()).toBe('2026-11-22T22:41:39.123Z');
  expect(row.jsonb_value).toEqual({ a: 1, b: [true, null, 'x'], c: { d: 1.5 } });
  expect(row.json_value).toEqual({ x: 1 });
  expect(row.jsonb_array).toEqual([1, 2]);
  expect(row.true_value).toBe(true);
  expect(row.false_value).toBe(false);
  expect(row.text_value).toBe('texto ñ');
  expect(row.null_int8).toBeNull();
  expect(row.null_numeric).toBeNull();
  expect(row.null_jsonb).toBeNull();
}

/** Resolves with `promise`, or with 'hung' if it has not settled after `ms` (a guard, not a timing claim). */
function unlessHung<T>(promise: Promise<T>, ms = 10_000): Promise<T | 'hung'> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<'hung'>((resolve) => {
      timer = setTimeout(() => resolve('hung'), ms);
    }),
  ]);
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe.each(databaseKinds())('Database adapter on %s', (kind) => {
  let database: TestDatabase;
  let db: Database;
  beforeAll(async () => {
    database = await createTestDatabase(kind);
    db = database.db;
  });
  afterAll(() => database.drop());

  describe('JS types', () => {
    it('maps int8 → number, numeric → string, timestamptz → Date, json/jsonb → value, bool → boolean', async () => {
      const { rows } = await db.query(TYPES_SQL);
      expectCanonicalTypes(rows[0]!);
    });

    it('maps the same way inside a transaction', async () => {
      const row = await db.transaction(async (tx) => (await tx.query(TYPES_SQL)).rows[0]!);
      expectCanonicalTypes(row);
    });

    it('returns count(*) as a number and sum(bigint) as a numeric string', async () => {
      const { rows } = await db.query<{ merchants: unknown; total: unknown }>(
        'select count(*) as merchants, sum(available_centavos + 5) as total from balances where business_code = $1', [PLATFORM_BUSINESS_CODE]);
      expect(rows[0]).toEqual({ merchants: 1, total: '5' });
    });

    it('maps arrays element by element the same way: int8[] → number[], numeric[] → string[]', async () => {
      const { rows } = await db.query('select array[1, 9007199254740991]::int8[] as int8_array, array[1.50, 2]::numeric[] as numeric_array, array[true, false] as bool_array');
      expect(rows[0]).toEqual({ int8_array: [1, 9_007_199_254_740_991], numeric_array: ['1.50', '2'], bool_array: [true, false] });
    });

    it('reports rowCount for writes and reads', async () => {
      const insert = await db.query("insert into partners (name) values ('uno'), ('dos') returning id");
      expect(insert.rowCount).toBe(2);
      expect(insert.rows.every((row) => typeof row.id === 'number')).toBe(true);
      const update = await db.query('update partners set name = name where id = any($1::bigint[])', [insert.rows.map((row) => row.id)]);
      expect(update.rowCount).toBe(2);
      expect(update.rows).toEqual([]);
    });
  });

  describe('int8 limits', () => {
    it('returns int8 up to ±(2^53 − 1) exactly', async () => {
      const { rows } = await db.query('select 9007199254740991::int8 as largest, (-9007199254740991)::int8 as smallest');
      expect(rows[0]).toEqual({ largest: Number.MAX_SAFE_INTEGER, smallest: Number.MIN_SAFE_INTEGER });
    });

    it.each(['9007199254740992', '9007199254740993', '-9007199254740993', '9223372036854775807'])('throws on %s instead of rounding it', async (value) => {
      const error = await caught(db.query(`select ${value}::int8 as too_large`));
      expect(error).toBeInstanceOf(RangeError);
      expect(String((error as Error).message)).toContain('2^53');
      // The database still answers afterwards.
      expect((await db.query('select 1::int8 as one')).rows).toEqual([{ one: 1 }]);
    });

    it('throws inside a transaction too, which then rolls back', async () => {
      const error = await caught(db.transaction(async (tx) => {
        await tx.query("insert into partners (name) values ('int8-rollback')");
        await tx.query('select 9007199254740993::int8 as too_large');
      }));
      expect(error).toBeInstanceOf(RangeError);
      const { rows } = await db.query("select count(*) as count from partners where name = 'int8-rollback'");
      expect(rows[0]!.count).toBe(0);
    });
  });

  describe('transactions', () => {
    it('commits when the work resolves and rolls back when it throws, rethrowing the same error', async () => {
      const committed = await db.transaction(async (tx) => (await tx.query<{ id: number }>("insert into partners (name) values ('committed') returning id")).rows[0]!.id);
      const failure = new Error('work failed');
      const error = await caught(db.transaction(async (tx) => {
        await tx.query("insert into partners (name) values ('rolled back')");
        throw failure;
      }));
      expect(error).toBe(failure);
      const { rows } = await db.query<{ name: string }>("select name from partners where name in ('committed', 'rolled back')");
      expect(rows).toEqual([{ name: 'committed' }]);
      expect(typeof committed).toBe('number');
    });

    it('sends notifyAfterCommit notifications after a commit, never after a rollback', async () => {
      const channel = `adapter_test_${kind}_${Math.random().toString(36).slice(2, 10)}`;
      const received: string[] = [];
      const unlisten = await db.listen(channel, (payload) => received.push(payload));
      try {
        await caught(db.transaction(async (tx) => {
          tx.notifyAfterCommit(channel, 'rolled-back');
          await tx.query('select 1');
          throw new Error('roll back');
        }));
        await db.transaction(async (tx) => {
          tx.notifyAfterCommit(channel, 'committed');
          await tx.query('select 1');
        });
        await db.flushNotifications();
        // 'committed' arrives twice: at once in this process, then through the database. The database
        // delivers in commit order: once its 'committed' is here, a sent 'rolled-back' would be too.
        for (let attempt = 0; attempt < 200 && received.length < 2; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        expect(received).toEqual(['committed', 'committed']);
      } finally {
        await unlisten();
      }
    });
    it('runs afterCommit hooks in order once committed, before the transaction call returns; never after a rollback', async () => {
      const ran: string[] = [];
      await caught(db.transaction(async (tx) => {
        tx.afterCommit(() => ran.push('rolled back'));
        await tx.query('select 1');
        throw new Error('roll back');
      }));
      const value = await db.transaction(async (tx) => {
        tx.afterCommit(() => ran.push('first'));
        tx.afterCommit(() => {
          throw new Error('a failing hook is reported, not thrown: the transaction has committed');
        });
        tx.afterCommit(() => ran.push('third'));
        await tx.query('select 1');
        expect(ran).toEqual([]); // not before the commit
        return 'committed';
      });
      expect(value).toBe('committed');
      expect(ran).toEqual(['first', 'third']);
    });

    it('tells this process\'s listeners of a committed notification before the transaction call returns, and again through the database', async () => {
      const channel = `adapter_local_${kind}_${Math.random().toString(36).slice(2, 10)}`;
      const received: string[] = [];
      const unlisten = await db.listen(channel, (payload) => received.push(payload));
      try {
        await db.transaction(async (tx) => {
          tx.notifyAfterCommit(channel, 'paid');
          await tx.query('select 1');
        });
        expect(received).toEqual(['paid']); // at once, no round trip
        await db.flushNotifications();
        for (let attempt = 0; attempt < 200 && received.length < 2; attempt++) {
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        expect(received).toEqual(['paid', 'paid']); // and the database's delivery, which other processes get
      } finally {
        await unlisten();
      }
      db.notify(channel, 'after unlisten');
      await db.flushNotifications();
      expect(received).toEqual(['paid', 'paid']);
    });
  });

  describe('writes awaited only before the commit (awaitBeforeCommit)', () => {
    const names = async (prefix: string) =>
      (await db.query<{ name: string }>('select name from partners where name like $1::text order by id', [`${prefix}%`])).rows.map((r) => r.name);
    const later = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    it('commits only after such a write, even one not sent yet when the work resolves, and runs its after-commit hooks', async () => {
      const ran: string[] = [];
      const value = await db.transaction(async (tx) => {
        await tx.query("insert into partners (name) values ('ahead-1')");
        // Sent 50 ms after the work resolved: only a commit that waits for it can hold it.
        tx.awaitBeforeCommit(later(50).then(() => tx.query("insert into partners (name) values ('ahead-2')")).then(() => tx.afterCommit(() => ran.push('hook'))));
        return 'done';
      });
      expect(value).toBe('done');
      expect(ran).toEqual(['hook']);
      expect(await names('ahead-')).toEqual(['ahead-1', 'ahead-2']);
    });

    it('rolls back everything when such a write fails, though the work resolved, and rejects with its error', async () => {
      const error = await caught(db.transaction(async (tx) => {
        await tx.query("insert into partners (name) values ('failed-ahead-1')");
        // The balance may not go below zero: this write fails while the next statement is already sent.
        tx.awaitBeforeCommit(tx.query('update balances set available_centavos = -1 where business_code = $1', [PLATFORM_BUSINESS_CODE]));
        await caught(tx.query("insert into partners (name) values ('failed-ahead-2')")); // behind the failure: refused
        return 'the work resolved';
      }));
      expect(databaseErrorOf(error)?.constraint).toBe('balances_available_nonnegative');
      expect(await names('failed-ahead-')).toEqual([]);
      // The connection is usable afterwards: the next transaction commits.
      await db.transaction((tx) => tx.query("insert into partners (name) values ('after-failed-ahead')"));
      expect(await names('after-failed-ahead')).toEqual(['after-failed-ahead']);
    });

    it('reports the failed write, not the "transaction is aborted" of the statement the work was waiting for behind it', async () => {
      const error = await caught(db.transaction(async (tx) => {
        tx.awaitBeforeCommit(tx.query('update balances set available_centavos = -1 where business_code = $1', [PLATFORM_BUSINESS_CODE]));
        await tx.query("insert into partners (name) values ('behind-failed-ahead')"); // fails with 25P02, and the work throws it
      }));
      expect(databaseErrorOf(error)).toEqual({ code: SqlState.CHECK_VIOLATION, constraint: 'balances_available_nonnegative' });
      expect(await names('behind-failed-ahead')).toEqual([]);
    });

    it('lets such a write finish inside the transaction before rolling back when the work throws', async () => {
      const failure = new Error('work failed');
      let lateWrite: 'ran' | 'refused' | 'pending' = 'pending';
      const error = await caught(db.transaction(async (tx) => {
        tx.awaitBeforeCommit(later(50).then(() => tx.query("insert into partners (name) values ('thrown-ahead')")).then(
          () => { lateWrite = 'ran'; },
          (refused: unknown) => { lateWrite = 'refused'; throw refused; },
        ));
        throw failure;
      }));
      expect(error).toBe(failure);
      expect(lateWrite).toBe('ran'); // inside the transaction, which then rolled back
      expect(await names('thrown-ahead')).toEqual([]);
    });

    it('refuses statements through a handle whose transaction has ended, instead of running them on whatever the connection does next', async () => {
      let leaked: Transaction | undefined;
      await db.transaction(async (tx) => {
        leaked = tx;
        await tx.query('select 1');
      });
      expect(await caught(leaked!.query("insert into partners (name) values ('leaked')"))).toBeInstanceOf(TransactionEndedError);
      expect(() => leaked!.awaitBeforeCommit(Promise.resolve())).toThrow(TransactionEndedError);
      expect(await names('leaked')).toEqual([]);
    });

    it('keeps a write that fails while the work still runs from going unhandled', async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const error = await caught(db.transaction(async (tx) => {
          tx.awaitBeforeCommit(Promise.reject(new Error('refused early')));
          await later(20); // the event loop turns: an unhandled rejection would be reported now
          await tx.query('select 1');
        }));
        expect((error as Error).message).toBe('refused early');
        await later(20);
        expect(unhandled).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
      }
    });
  });

  describe('constraint violations', () => {
    it('reports the CHECK balances_available_nonnegative as SQLSTATE 23514 with its name', async () => {
      const error = await caught(db.query('update balances set available_centavos = -1 where business_code = $1', [PLATFORM_BUSINESS_CODE]));
      expect(SqlState.CHECK_VIOLATION).toBe('23514');
      expect(databaseErrorOf(error)).toEqual({ code: '23514', constraint: 'balances_available_nonnegative' });
    });

    it('reports it the same way from inside a transaction, which rolls back', async () => {
      const error = await caught(db.transaction(async (tx) => {
        await tx.query('update balances set pending_out_centavos = pending_out_centavos + 5 where business_code = $1', [PLATFORM_BUSINESS_CODE]);
        await tx.query('update balances set available_centavos = available_centavos - 1 where business_code = $1', [PLATFORM_BUSINESS_CODE]);
      }));
      expect(databaseErrorOf(error)?.constraint).toBe('balances_available_nonnegative');
      const { rows } = await db.query('select available_centavos, pending_out_centavos from balances where business_code = $1', [PLATFORM_BUSINESS_CODE]);
      expect(rows).toEqual([{ available_centavos: 0, pending_out_centavos: 0 }]);
    });

    it('reports a unique violation as 23505 with the constraint name', async () => {
      const error = await caught(db.query(
        "insert into api_keys (key_prefix, key_hash, owner_kind, business_code) values ('mk_test_dup', 'h1', 'merchant', $1), ('mk_test_dup', 'h2', 'merchant', $1)",
        [PLATFORM_BUSINESS_CODE]));
      expect(databaseErrorOf(error)).toEqual({ code: SqlState.UNIQUE_VIOLATION, constraint: 'api_keys_key_prefix_unique' });
    });
  });

  it.runIf(kind === 'pglite')('throws ReentrantQueryError for db.query inside db.transaction instead of hanging', async () => {
    const outcome = await unlessHung(db.transaction(async (tx) => {
      await tx.query("insert into partners (name) values ('reentrant')");
      const inner = await caught(db.query('select 1'));
      expect(inner).toBeInstanceOf(ReentrantQueryError);
      const nested = await caught(db.transaction(async () => 'never'));
      expect(nested).toBeInstanceOf(ReentrantQueryError);
      // The transaction itself still works through its handle.
      return (await tx.query<{ one: number }>('select 1 as one')).rows[0]!.one;
    }));
    expect(outcome).toBe(1);
    // And an unhandled re-entry fails the transaction, which rolls back, instead of waiting forever.
    const failed = await unlessHung(caught(db.transaction(async (tx) => {
      await tx.query("insert into partners (name) values ('reentrant-unhandled')");
      await db.query('select 1');
    })));
    expect(failed).toBeInstanceOf(ReentrantQueryError);
    const { rows } = await db.query<{ name: string }>("select name from partners where name like 'reentrant%' order by name");
    expect(rows).toEqual([{ name: 'reentrant' }]);
  });

  it.runIf(kind === 'postgres')('lets db.query run beside an open transaction on another connection', async () => {
    const outcome = await unlessHung(db.transaction(async (tx) => {
      await tx.query("insert into partners (name) values ('beside')");
      // READ COMMITTED: the other connection does not see the uncommitted row.
      const { rows } = await db.query("select count(*) as count from partners where name = 'beside'");
      return rows[0]!.count;
    }));
    expect(outcome).toBe(0);
  });
});

describe('PGlite in a data folder (the default of npm start)', () => {
  let directory: string;
  let db: Database;
  beforeAll(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'mps-adapter-test-'));
    db = await openPglite({ dataDir: directory });
  });
  afterAll(async () => {
    await db?.close();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('maps types like the in-memory database and throws on int8 past 2^53', async () => {
    expectCanonicalTypes((await db.query(TYPES_SQL)).rows[0]!);
    expect(await caught(db.query('select 9007199254740993::int8 as too_large'))).toBeInstanceOf(RangeError);
  });
});
