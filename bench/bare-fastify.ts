// Baseline of the QR benchmarks: a bare Fastify route on the same machine, in the same run.
// GET /hello answers a tiny JSON; GET /qr-shaped answers a static body the size and shape of a QR resource.
// With BENCH_PK_DATABASE_URL set (bench/ceilings.ts), GET /pk/:id also answers one row of that database's
// `bench_pk` table, read by primary key through a pg.Pool of 10 (the service's pool size): the least a
// read of one row through Fastify and pg can cost on this machine.
import Fastify from 'fastify';
import pg from 'pg';

const port = Number(process.argv[2] ?? 3902);
const qrShaped = JSON.parse(process.argv[3] ?? '{}') as Record<string, unknown>;
const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
app.get('/qr-shaped', async () => qrShaped);
const pkDatabaseUrl = process.env.BENCH_PK_DATABASE_URL;
if (pkDatabaseUrl) {
  const pool = new pg.Pool({ connectionString: pkDatabaseUrl, max: 10 });
  app.get<{ Params: { id: string } }>('/pk/:id', async (request, reply) => {
    const { rows } = await pool.query<{ body: unknown }>('select body from bench_pk where id = $1', [Number(request.params.id)]);
    return rows[0] ? rows[0].body : reply.code(404).send({ error: 'not found' });
  });
}
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`bare fastify on ${port}\n`);
