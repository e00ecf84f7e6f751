// src/qr/png-read.ts against pngjs: for every kind of PNG it reads itself, each pixel's luminance is the
// greyscale jsQR computes from pngjs's RGBA, whatever the filters; the other kinds answer null
// (left to pngjs), and a damaged file throws. The PNGs are written here by a small encoder of the test's
// own, one filter type per row in turn, so that all five filters and every colour type meet the reader.
import { crc32, deflateSync } from 'node:zlib';
import { PNG } from 'pngjs';
import { describe, expect, it } from 'vitest';
import { readPngLuminance } from '../../src/qr/png-read.ts';

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(4 + head.length + 4);
  out.writeUInt32BE(data.length, 0);
  head.copy(out, 4);
  out.writeUInt32BE(crc32(head), 8 + data.length);
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

interface Picture {
  width: number;
  height: number;
  depth: number;
  colorType: number;
  /** Unfiltered scanlines, `stride` bytes each. */
  lines: Buffer[];
  palette?: Buffer;
  interlace?: number;
}

/** A PNG of `picture`, row y filtered with `filterOf(y)` (the test's own encoder). */
function encode(picture: Picture, filterOf: (y: number) => number = (y) => y % 5): Buffer {
  const { width, height, depth, colorType, lines } = picture;
  const left = Math.max(1, (CHANNELS[colorType]! * depth) >> 3);
  const filtered = lines.map((line, y) => {
    const up = y > 0 ? lines[y - 1]! : Buffer.alloc(line.length);
    const type = filterOf(y);
    const out = Buffer.alloc(line.length + 1);
    out[0] = type;
    for (let i = 0; i < line.length; i++) {
      const a = i >= left ? line[i - left]! : 0;
      const b = up[i]!;
      const c = i >= left ? up[i - left]! : 0;
      const predictor = [0, a, b, (a + b) >> 1, paeth(a, b, c)][type]!;
      out[i + 1] = (line[i]! - predictor) & 0xff;
    }
    return out;
  });
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = depth;
  header[9] = colorType;
  header[12] = picture.interlace ?? 0;
  return Buffer.concat([
    SIGNATURE, chunk('IHDR', header), ...(picture.palette ? [chunk('PLTE', picture.palette)] : []),
    chunk('IDAT', deflateSync(Buffer.concat(filtered))), chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A picture of random samples (a fixed seed), some rows repeating the one above as a QR's do. */
function randomPicture(width: number, height: number, depth: number, colorType: number, seed: number): Picture {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) >> 8;
  const stride = Math.ceil((width * CHANNELS[colorType]! * depth) / 8);
  const entries = colorType === 3 ? Math.min(1 << depth, 7) : 0;
  const lines: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    if (y > 0 && y % 3 === 0) {
      lines.push(Buffer.from(lines[y - 1]!));
      continue;
    }
    const line = Buffer.alloc(stride);
    if (colorType === 3) {
      for (let x = 0; x < width; x++) {
        const bit = x * depth;
        line[bit >> 3] = line[bit >> 3]! | ((next() % entries) << (8 - depth - (bit & 7)));
      }
    } else {
      for (let i = 0; i < stride; i++) line[i] = next() & 0xff;
    }
    lines.push(line);
  }
  const palette = colorType === 3 ? Buffer.from(Array.from({ length: entries * 3 }, () => next() & 0xff)) : undefined;
  return { width, height, depth, colorType, lines, ...(palette ? { palette } : {}) };
}

/** The greyscale jsQR's binarizer computes from pngjs's RGBA of `png` (its own formula, rounded as it stores it). */
function jsQrLuminance(png: Buffer): number[] {
  const { data } = PNG.sync.read(png);
  const out = new Uint8ClampedArray(data.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = 0.2126 * data[4 * i]! + 0.7152 * data[4 * i + 1]! + 0.0722 * data[4 * i + 2]!;
  return Array.from(out);
}

function expectSameAsPngjs(png: Buffer, label: string): void {
  const read = readPngLuminance(png, 4_000);
  expect(read, label).not.toBeNull();
  expect(Array.from(read!.pixels), label).toEqual(jsQrLuminance(png));
}

describe('readPngLuminance', () => {
  const kinds: Array<[number, number]> = [[0, 1], [0, 2], [0, 4], [0, 8], [3, 1], [3, 2], [3, 4], [3, 8], [2, 8], [4, 8], [6, 8]];

  it.each(kinds)('reads colour type %i at %i bits as pngjs does, through all five filters', (colorType, depth) => {
    for (const [width, height] of [[1, 1], [7, 5], [33, 20]] as const) {
      const png = encode(randomPicture(width, height, depth, colorType, width * 31 + depth));
      expectSameAsPngjs(png, `${width}×${height}`);
    }
  });

  it('copies the rows an Up filter repeats, also after rows of every other filter', () => {
    const picture = randomPicture(40, 30, 8, 6, 7);
    expectSameAsPngjs(encode(picture, (y) => (y % 3 === 0 ? 2 : y % 5)), 'Up on each repeated row');
    expectSameAsPngjs(encode(picture, () => 2), 'Up everywhere');
    expectSameAsPngjs(encode(picture, () => 0), 'None everywhere');
  });

  it('reads images split over several IDAT chunks', () => {
    const png = encode(randomPicture(20, 10, 8, 2, 3));
    const idat = png.indexOf('IDAT') - 4;
    const length = png.readUInt32BE(idat);
    const data = png.subarray(idat + 8, idat + 8 + length);
    const split = Buffer.concat([png.subarray(0, idat), chunk('IDAT', data.subarray(0, 10)), chunk('IDAT', data.subarray(10)), png.subarray(idat + 12 + length)]);
    expect(Array.from(readPngLuminance(split, 4_000)!.pixels)).toEqual(Array.from(readPngLuminance(png, 4_000)!.pixels));
  });

  it('leaves to pngjs what it does not read: 16-bit samples, interlaced images', () => {
    expect(readPngLuminance(PNG.sync.write(new PNG({ width: 4, height: 4 }), { bitDepth: 16 }), 4_000)).toBeNull();
    const interlaced = encode({ ...randomPicture(8, 8, 8, 0, 1), interlace: 1 });
    expect(readPngLuminance(interlaced, 4_000)).toBeNull();
  });

  it('throws on a damaged file and on one larger than allowed, before inflating it', () => {
    const png = encode(randomPicture(16, 16, 8, 6, 5));
    const damaged = (at: number) => {
      const copy = Buffer.from(png);
      copy[at] = copy[at]! ^ 0xff;
      return copy;
    };
    expect(() => readPngLuminance(Buffer.from('not a png at all'), 4_000)).toThrow();
    expect(() => readPngLuminance(damaged(20), 4_000)).toThrow(/CRC/); // the IHDR's width
    expect(() => readPngLuminance(damaged(png.length - 20), 4_000)).toThrow(/CRC/); // inside the IDAT
    expect(() => readPngLuminance(png.subarray(0, png.length - 12), 4_000)).toThrow(); // no IEND
    expect(() => readPngLuminance(png.subarray(0, 40), 4_000)).toThrow(/truncated/);
    expect(() => readPngLuminance(png, 15)).toThrow(/too large/);
    // A header that promises a larger image than the data holds, and data that inflates past the image.
    const short = encode({ ...randomPicture(16, 16, 8, 6, 5), height: 17 });
    expect(() => readPngLuminance(short, 4_000)).toThrow();
    const long = encode({ ...randomPicture(16, 16, 8, 6, 5), height: 15 });
    expect(() => readPngLuminance(long, 4_000)).toThrow();
  });

  it('throws on an unknown filter type and on a palette index past the palette', () => {
    const header = Buffer.alloc(13);
    header.writeUInt32BE(2, 0);
    header.writeUInt32BE(1, 4);
    header[8] = 8;
    header[9] = 0;
    const badFilter = Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.from([7, 0, 0]))), chunk('IEND', Buffer.alloc(0))]);
    expect(() => readPngLuminance(badFilter, 4_000)).toThrow(/filter/);
    header[9] = 3;
    const pastPalette = Buffer.concat([SIGNATURE, chunk('IHDR', header), chunk('PLTE', Buffer.from([0, 0, 0])), chunk('IDAT', deflateSync(Buffer.from([0, 0, 5]))), chunk('IEND', Buffer.alloc(0))]);
    expect(() => readPngLuminance(pastPalette, 4_000)).toThrow(/palette/);
  });
});
