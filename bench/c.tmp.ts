import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadavg } from 'node:os';
const name = 'mps_bench_tmp' + process.pid;
const admin = async (sql: string) => { const c = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' }); await c.connect(); await c.query(sql); await c.end(); };
await admin(`create database ${name}`);
for (const pool of ['1', '2', '3']) {
  const port = String(4600 + Number(pool));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { env: { ...process.env, TMP_POOL: pool, DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${name}`, PORT: port, RATE_LIMIT: 'off', LOG_LEVEL: 'warn', ADMIN_TOKEN: 'x'.repeat(20) }, stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((r) => child.stdout!.on('data', (d) => { if (String(d).includes('listening')) r(); }));
  const m = await (await fetch(`http://127.0.0.1:${port}/admin/v1/merchants`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + 'x'.repeat(20) }, body: '{"name":"B"}' })).json() as any;
  const body = JSON.stringify({ business_code: m.business_code, amount: 150.5, description: 'Order 42' });
  const r = await autocannon({ url: `http://127.0.0.1:${port}/api/v2/simple-qrs`, method: 'POST', body, headers: { 'content-type': 'application/json', 'x-api-key': m.api_key }, connections: 50, duration: 6 });
  console.log('pool', pool, 'create rps', r.requests.average, 'p99', r.latency.p99, 'load', loadavg()[0]);
  child.kill(); await new Promise((r) => setTimeout(r, 1000));
}
await admin(`drop database ${name} with (force)`);
