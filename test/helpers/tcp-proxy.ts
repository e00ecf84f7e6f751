// A TCP forwarder in front of the test PostgreSQL server, to cut the service off its database and give it
// back without stopping the shared server: `refuse()` closes every forwarded connection and refuses new
// ones (as a stopped or unreachable server does), `accept()` forwards again on the same port.
import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** postgres://… of `databaseUrl` rewritten to go through the proxy. */
  urlThrough(databaseUrl: string): string;
  accept(): Promise<void>;
  refuse(): Promise<void>;
  close(): Promise<void>;
}

/** A proxy to `target` ("host:port"), refusing connections until `accept()`. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  // Take a free port, then let it go: the proxy listens there only while it accepts.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const refuse = async () => {
    const closing = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (closing) await new Promise<void>((resolve) => closing.close(() => resolve()));
  };

  return {
    port,
    urlThrough(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    async accept() {
      if (server) return;
      const listening = net.createServer((client) => {
        const upstream = net.connect(target.port, target.host);
        track(client);
        track(upstream);
        client.pipe(upstream).pipe(client);
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      await new Promise<void>((resolve, reject) => {
        listening.once('error', reject);
        listening.listen(port, '127.0.0.1', resolve);
      });
      server = listening;
    },
    refuse,
    close: refuse,
  };
}
