// An HTTP forwarder in front of a test service that can lose an answer on its way back, as a mobile
// network or a load balancer timing out does: `dropAnswerTo('POST /api/v2/transfers')` lets the next such
// request reach the service — which does the work — and then cuts the client's connection before a
// byte of the answer reaches it. It counts what passes, so a test can tell a retry from a single send.
import net from 'node:net';

export interface DroppingProxy {
  url: string;
  /** Request lines seen (`POST /api/v2/transfers`), in order, retries included. */
  requests: string[];
  /** Cut the answer to the next request whose request line starts with `prefix`. */
  dropAnswerTo(prefix: string): void;
  close(): Promise<void>;
}

export async function startDroppingProxy(targetUrl: string): Promise<DroppingProxy> {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  const armed: string[] = [];
  const requests: string[] = [];
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };

  const server = net.createServer((client) => {
    track(client);
    const upstream = net.connect(Number(target.port), target.hostname);
    track(upstream);
    let dropping = false;
    client.on('data', (chunk: Buffer) => {
      // A request starts a chunk on a kept-alive connection: its first line is METHOD PATH HTTP/1.1.
      const line = /^([A-Z]+ \S+) HTTP\/1\.1\r\n/.exec(chunk.toString('latin1'));
      if (line) {
        const requestLine = line[1]!.replace(/\?.*$/, '');
        requests.push(requestLine);
        const index = armed.findIndex((prefix) => requestLine.startsWith(prefix));
        if (index >= 0) {
          armed.splice(index, 1);
          dropping = true;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (dropping) {
        // The service has answered, so it has done the work; the client hears a reset instead.
        client.resetAndDestroy();
        upstream.destroy();
        return;
      }
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    requests,
    dropAnswerTo: (prefix) => armed.push(prefix),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
