// The CPU of the bank QR image decode (src/qr/bank-image.ts decodeBankQrImage), in-process, one thread, no
// database: for the simulator's image (what every POST /api/v2/simple-qrs on RAIL=baneco decodes) and a
// variety of others — qrcode's own PNGs of symbols of several sizes at several scales, the service's own
// 1-bit rendering, light modules on dark, a caption beside the symbol, images without a symbol — each
// decoded over and over for about a second, timed by process.cpuUsage() (user + system CPU of this process,
// so other processes on a shared machine do not count). Each image's answer is checked first.
//
//   npx tsx bench/qr-decode.ts [seconds per image, 1]
// Prints one line per image: CPU per decode and decodes per CPU-second. bench/bank.ts reports the rate of the
// simulator's image too, beside its load, as wall-clock rates.
import { deflateSync, crc32 } from 'node:zlib';
import { loadavg } from 'node:os';
import QRCode from 'qrcode';
import { decodeBankQrImage } from '../src/qr/bank-image.ts';
import { renderQrPng } from '../src/qr/png.ts';
import { emvPayload, qrPngBase64 } from '../simulators/baneco/emv.ts';

const SECONDS = Number(process.argv[2] ?? 1);

/** CPU microseconds per call of `step`, over about SECONDS of CPU. */
function cpuPerCall(step: () => unknown): number {
  for (let i = 0; i < 20; i++) step(); // warm-up
  const start = process.cpuUsage();
  let count = 0;
  let used = 0;
  while (used < SECONDS * 1e6) {
    for (let i = 0; i < 10; i++) step();
    count += 10;
    const now = process.cpuUsage(start);
    used = now.user + now.system;
  }
  return used / count;
}

const qrcodePng = (text: string, options: QRCode.QRCodeToBufferOptions = {}) =>
  QRCode.toBuffer(text, { type: 'png', errorCorrectionLevel: 'M', margin: 4, width: 300, ...options });

/** An 8-bit RGBA PNG of `width` × `height` whose pixel (x, y) is black when `dark(x, y)`. */
function drawnPng(width: number, height: number, dark: (x: number, y: number) => boolean): Buffer {
  const raw = Buffer.alloc((1 + 4 * width) * height, 255);
  for (let y = 0; y < height; y++) {
    raw[y * (1 + 4 * width)] = 0;
    for (let x = 0; x < width; x++) if (dark(x, y)) raw.fill(0, y * (1 + 4 * width) + 1 + 4 * x, y * (1 + 4 * width) + 4 + 4 * x);
  }
  const chunk = (type: string, data: Buffer) => {
    const head = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const out = Buffer.alloc(8 + head.length);
    out.writeUInt32BE(data.length, 0);
    head.copy(out, 4);
    out.writeUInt32BE(crc32(head), 4 + head.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = 6;
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
}

async function main(): Promise<void> {
  const payload = emvPayload({ qrId: '21061401016000000003', currency: 'BOB', amount: 150.5, dueDate: '2026-12-31', merchantName: 'COMERCIO DEMO', description: 'Order 42' });
  const text = (length: number) => Array.from({ length }, (_, i) => String.fromCharCode(33 + ((i * 7 + length) % 90))).join('');
  const images: Array<{ name: string; base64: string; expected: string | null }> = [
    { name: 'the simulator\'s image (300 px RGBA, level M)', base64: await qrPngBase64(payload), expected: payload },
    { name: 'qrcode\'s own PNG of it', base64: (await qrcodePng(payload)).toString('base64'), expected: payload },
    { name: 'the service\'s own 1-bit rendering of it', base64: renderQrPng(payload).toString('base64'), expected: payload },
  ];
  for (const length of [20, 300, 600]) {
    for (const width of [300, 450]) {
      const modules = QRCode.create(text(length), { errorCorrectionLevel: 'M' }).modules.size;
      images.push({ name: `${length} characters (${modules} modules), ${width} px`, base64: (await qrcodePng(text(length), { width })).toString('base64'), expected: text(length) });
    }
  }
  images.push({ name: 'light modules on dark', base64: (await qrcodePng(payload, { color: { dark: '#ffffffff', light: '#000000ff' } })).toString('base64'), expected: payload });
  const plain = await qrcodePng(payload);
  const { PNG } = await import('pngjs');
  const marked = PNG.sync.read(plain);
  for (let y = 285; y < 290; y++) for (let x = 40; x < 260; x++) marked.data.fill(0, (y * 300 + x) * 4, (y * 300 + x) * 4 + 3);
  images.push({ name: 'a caption bar under the symbol', base64: PNG.sync.write(marked).toString('base64'), expected: payload });
  images.push({ name: 'no symbol: white 300 px', base64: drawnPng(300, 300, () => false).toString('base64'), expected: null });
  images.push({ name: 'no symbol: a lone square', base64: drawnPng(300, 300, (x, y) => x >= 75 && x < 225 && y >= 75 && y < 225).toString('base64'), expected: null });

  console.log(`load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}; ${SECONDS} s of CPU per image`);
  for (const image of images) {
    const got = decodeBankQrImage(image.base64);
    if (got !== image.expected) {
      console.log(`${image.name}: decoded ${got === null ? 'null' : JSON.stringify(got.slice(0, 40))}, expected ${image.expected === null ? 'null' : 'its payload'} (not timed)`);
      continue;
    }
    const us = cpuPerCall(() => decodeBankQrImage(image.base64));
    console.log(`${image.name}: ${(us / 1000).toFixed(3)} ms CPU a decode, ${Math.round(1e6 / us)} decodes per CPU-second`);
  }
}

await main();
