// The fuzz tests' HTTP client. node:http rather than fetch: fetch normalizes the URL (`..` segments,
// percent-encodings) and sets a Content-Type of its own on text bodies, and the point here is to send
// exactly the bytes a hostile client would.
import http from 'node:http';

export interface HttpRequest {
  method: string;
  /** Path and query, already percent-encoded: sent byte for byte. */
  target: string;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** Sends requests to one app over a keep-alive connection pool; `close()` ends the pool. */
export class HttpClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  constructor(private readonly baseUrl: string) {}

  send(request: HttpRequest): Promise<HttpResponse> {
    const url = new URL(this.baseUrl);
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const headers = { ...request.headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) };
    return new Promise((resolve, reject) => {
      const outgoing = http.request({
        agent: this.agent, host: url.hostname, port: url.port, method: request.method, path: request.target, headers,
      }, (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text: Buffer.concat(chunks).toString('utf8') }));
        incoming.on('error', reject);
      });
      outgoing.on('error', reject);
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

/** Percent-encodes every byte of the UTF-8 text except RFC 3986's unreserved characters (a lone surrogate becomes U+FFFD's bytes). */
export function percentEncode(text: string): string {
  let encoded = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9\-._~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return encoded;
}

/** A request as a failure message shows it: method, target, headers and the start of the body. */
export function describeRequest(request: HttpRequest): string {
  const lines = [`${request.method} ${shorten(request.target, 300)}`];
  for (const [name, value] of Object.entries(request.headers)) lines.push(`${name}: ${shorten(value, 120)}`);
  if (request.body !== undefined) {
    const text = Buffer.isBuffer(request.body) ? request.body.toString('utf8') : request.body;
    lines.push('', `${shorten(JSON.stringify(text), 600)}   (${Buffer.byteLength(request.body)} bytes, shown as a JS string)`);
  }
  return lines.join('\n');
}

export function describeResponse(response: HttpResponse): string {
  return `${response.status} ${response.headers['content-type'] ?? ''}\n${shorten(response.text, 600)}`;
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
