// Baseline of the QR benchmarks: a bare Fastify route on the same machine, in the same run.
// GET /hello answers a tiny JSON; GET /qr-shaped answers a static body the size and shape of a QR resource.
import Fastify from 'fastify';

const port = Number(process.argv[2] ?? 3902);
const qrShaped = JSON.parse(process.argv[3] ?? '{}') as Record<string, unknown>;
const app = Fastify({ logger: false });
app.get('/hello', async () => ({ hello: 'world' }));
app.get('/qr-shaped', async () => qrShaped);
await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`bare fastify on ${port}\n`);
