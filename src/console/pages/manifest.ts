// The console as an installable web app (docs/console.md#pos-terminal): the manifest every console page links
// (layout.ts) and its two PNG icons, drawn here at first use — nothing downloaded, no file to keep in step.
// Browsers fetch a manifest without cookies, so these routes are `public` to the guard: they read no
// session and hold nothing of any business. No service worker: the terminal needs the network to charge.
import { deflateSync, crc32 } from 'node:zlib';
import type { FastifyReply } from 'fastify';
import type { App } from '../../kernel/routes.ts';
import type { ConsoleKit } from './kit.ts';
import { THEME_COLOUR } from './layout.ts';

const ICON_SIZES = [192, 512] as const;
const STATIC_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cache-control': 'public, max-age=3600',
};

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

/**
 * The icon: the accent colour with a white QR-like mark (three finder squares and a dot), drawn on a
 * 20 × 20 grid so it reads at any size; the mark keeps inside the middle 80 % (a "maskable" safe zone).
 */
export function drawIcon(size: number): Buffer {
  const [r, g, b] = [1, 3, 5].map((i) => parseInt(THEME_COLOUR.slice(i, i + 2), 16)) as [number, number, number];
  const cell = size / 20;
  // Squares (in grid cells) of the mark: [x, y, side, white?], later ones drawn over earlier ones.
  const squares: Array<[number, number, number, boolean]> = [];
  for (const [x, y] of [[3, 3], [11, 3], [3, 11]] as const) squares.push([x, y, 6, true], [x + 1, y + 1, 4, false], [x + 2, y + 2, 2, true]);
  squares.push([12, 12, 2, true], [15, 12, 2, true], [12, 15, 2, true], [15, 15, 2, true]);
  const rows: Buffer[] = [];
  for (let py = 0; py < size; py++) {
    const row = Buffer.alloc(1 + size * 3); // filter byte 0, then RGB
    for (let px = 0; px < size; px++) {
      const gx = px / cell, gy = py / cell;
      let white = false;
      for (const [x, y, side, colour] of squares) if (gx >= x && gx < x + side && gy >= y && gy < y + side) white = colour;
      row.set(white ? [255, 255, 255] : [r, g, b], 1 + px * 3);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8 bits, RGB, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0)),
  ]);
}

export function manifestRoutes(app: App, kit: ConsoleKit): void {
  const icons = new Map<number, Buffer>();
  const iconOf = (size: number) => {
    let png = icons.get(size);
    if (!png) icons.set(size, (png = drawIcon(size)));
    return png;
  };
  const route = kit.route('public');

  app.get('/console/manifest.webmanifest', { schema: { tags: ['hosted pages'], hide: true, summary: 'Console: web app manifest' }, config: route }, async (request, reply: FastifyReply) => {
    const locale = kit.localeOf(request, null);
    reply.headers(STATIC_HEADERS).header('vary', 'Accept-Language').type('application/manifest+json; charset=utf-8');
    return reply.send(JSON.stringify({
      name: locale.t('console.app.name'),
      short_name: locale.t('console.app.short_name'),
      lang: locale.tag,
      start_url: locale.pathOf('/console/terminal'),
      scope: locale.pathOf('/console/'),
      display: 'standalone',
      orientation: 'any',
      theme_color: THEME_COLOUR,
      background_color: '#f6f8fa',
      icons: ICON_SIZES.map((size) => ({ src: locale.pathOf(`/console/icons/icon-${size}.png`), sizes: `${size}x${size}`, type: 'image/png', purpose: 'any maskable' })),
    }));
  });

  for (const size of ICON_SIZES) {
    app.get(`/console/icons/icon-${size}.png`, { schema: { tags: ['hosted pages'], hide: true, summary: `Console: app icon ${size} px` }, config: route }, async (_request, reply) =>
      reply.headers(STATIC_HEADERS).type('image/png').send(iconOf(size)));
  }
}
