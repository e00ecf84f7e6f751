// Picks free TCP ports on 127.0.0.1 at run time, so the suite never collides with a developer's server.
import net from 'node:net';

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The first free port from `preferred` upwards (PostgreSQL's: a recognisable number such as 55432). */
export async function freePortFrom(preferred: number, tries = 200): Promise<number> {
  for (let port = preferred; port < preferred + tries; port++) {
    if (await canListen(port)) return port;
  }
  throw new Error(`no free port in ${preferred}–${preferred + tries - 1}`);
}

/** Any free port the kernel hands out (service and receiver ports). */
export function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}
