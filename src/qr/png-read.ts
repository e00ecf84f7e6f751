// The brightness of each pixel of a PNG, for decoding a bank's QR image (bank-image.ts) cheaply. pngjs
// reads any PNG into RGBA with JavaScript loops over every byte, twice (unfilter, then convert): ~2.4 ms
// for the bank's 300 × 300 RGBA image here, more than the rest of its request. The plain files a QR
// renderer writes — not interlaced, 8 bits a channel (grey, grey + alpha, RGB, RGBA) or 1/2/4/8-bit grey
// or palette — are read here in one pass to one byte a pixel, node:zlib inflating (~0.4 ms for the bank's
// image); anything else answers null and the caller reads it with pngjs. The checks are pngjs's: every chunk's CRC, IHDR
// first, IEND present, the image data exactly as long as the header says.
import { crc32, inflateSync } from 'node:zlib';

/** One byte a pixel, row after row: 0 black … 255 white. */
export interface Luminance {
  width: number;
  height: number;
  pixels: Uint8ClampedArray;
}

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Channels per colour type: 0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA. */
const CHANNELS: Partial<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/**
 * The luminance of `bytes`, a PNG: null when it is of a kind read only by pngjs (interlaced, 16-bit, …);
 * throws when it is damaged. Rec. 709 luma weights (0.2126 R + 0.7152 G + 0.0722 B, jsQR's, kept), alpha
 * ignored: a grey level of pngjs's RGBA. Images larger than `maxSide` a side are refused
 * before anything is inflated.
 */
export function readPngLuminance(bytes: Buffer, maxSide: number): Luminance | null {
  if (bytes.length < SIGNATURE.length || !bytes.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a PNG');
  let width = 0;
  let height = 0;
  let depth = 0;
  let colorType = -1;
  let interlaced = false;
  let palette: Buffer | null = null;
  let ended = false;
  const data: Buffer[] = [];
  for (let offset = SIGNATURE.length; !ended;) {
    if (offset + 12 > bytes.length) throw new Error('truncated PNG');
    const length = bytes.readUInt32BE(offset);
    if (length > bytes.length - offset - 12) throw new Error('truncated PNG');
    const type = bytes.toString('latin1', offset + 4, offset + 8);
    const body = bytes.subarray(offset + 8, offset + 8 + length);
    if (crc32(bytes.subarray(offset + 4, offset + 8 + length)) !== bytes.readUInt32BE(offset + 8 + length)) throw new Error(`bad CRC in ${type}`);
    if ((offset === SIGNATURE.length) !== (type === 'IHDR')) throw new Error('IHDR is not the first chunk');
    if (type === 'IHDR') {
      if (length !== 13) throw new Error('bad IHDR');
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      depth = body[8]!;
      colorType = body[9]!;
      if (body[10] !== 0 || body[11] !== 0) throw new Error('unknown compression or filter method');
      interlaced = body[12] !== 0;
    } else if (type === 'PLTE') {
      palette = body;
    } else if (type === 'IDAT') {
      data.push(body);
    } else if (type === 'IEND') {
      ended = true;
    }
    offset += 12 + length;
  }
  if (width === 0 || height === 0) throw new Error('empty image');
  if (width > maxSide || height > maxSide) throw new Error('image too large');
  const channels = CHANNELS[colorType];
  const plain = depth === 8 || ((colorType === 0 || colorType === 3) && (depth === 1 || depth === 2 || depth === 4));
  if (channels === undefined || !plain || interlaced) return null;
  if (colorType === 3 && (palette === null || palette.length % 3 !== 0)) throw new Error('no palette');

  const bitsPerPixel = channels * depth;
  const stride = Math.ceil((width * bitsPerPixel) / 8);
  /** Bytes from a byte to the same byte of the pixel on its left, as the PNG filters count them. */
  const left = Math.max(1, bitsPerPixel >> 3);
  const expected = (stride + 1) * height;
  // maxOutputLength: a stream that inflates past the image throws here instead of filling memory.
  const raw = inflateSync(data.length === 1 ? data[0]! : Buffer.concat(data), { maxOutputLength: expected });
  if (raw.length !== expected) throw new Error('image data shorter than the image');
  const repeats = unfilter(raw, stride, height, left);
  return { width, height, pixels: luminanceOf(raw, repeats, { width, height, stride, depth, colorType, palette }) };
}

/**
 * Undoes the PNG filters in place: each scanline is its filter byte, then `stride` bytes. Answers which
 * lines repeat the line above: a QR renderer draws each module row several pixels high, and an encoder
 * files such a line as "Up" with every difference zero — copied here natively, and its luminance too
 * (luminanceOf), instead of being added up byte by byte; the JavaScript loops run for the other lines only.
 */
function unfilter(raw: Buffer, stride: number, height: number, left: number): Uint8Array {
  const repeats = new Uint8Array(height);
  const zeros = Buffer.alloc(stride);
  for (let y = 0; y < height; y++) {
    const line = y * (stride + 1) + 1;
    const up = line - stride - 1; // the line above (unfiltered already); none on the first line
    const first = y === 0;
    switch (raw[line - 1]) {
      case 0: // None
        break;
      case 1: // Sub
        for (let i = left; i < stride; i++) raw[line + i] = (raw[line + i]! + raw[line + i - left]!) & 0xff;
        break;
      case 2: // Up
        if (first) break;
        if (zeros.compare(raw, line, line + stride) === 0) {
          raw.copyWithin(line, up, up + stride);
          repeats[y] = 1;
        } else {
          for (let i = 0; i < stride; i++) raw[line + i] = (raw[line + i]! + raw[up + i]!) & 0xff;
        }
        break;
      case 3: // Average
        for (let i = 0; i < stride; i++) {
          const a = i >= left ? raw[line + i - left]! : 0;
          const b = first ? 0 : raw[up + i]!;
          raw[line + i] = (raw[line + i]! + ((a + b) >> 1)) & 0xff;
        }
        break;
      case 4: // Paeth
        for (let i = 0; i < stride; i++) {
          const a = i >= left ? raw[line + i - left]! : 0;
          const b = first ? 0 : raw[up + i]!;
          const c = i >= left && !first ? raw[up + i - left]! : 0;
          const pa = Math.abs(b - c);
          const pb = Math.abs(a - c);
          const pc = Math.abs(a + b - 2 * c);
          raw[line + i] = (raw[line + i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 0xff;
        }
        break;
      default:
        throw new Error(`unknown filter type ${raw[line - 1]}`);
    }
  }
  return repeats;
}


interface Layout {
  width: number;
  height: number;
  stride: number;
  depth: number;
  colorType: number;
  palette: Buffer | null;
}

/** Rec. 709 luma (jsQR's binarizer's weights); stored in a Uint8ClampedArray, which rounds it. */
function luma(r: number, g: number, b: number): number {
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function luminanceOf(raw: Buffer, repeats: Uint8Array, { width, height, stride, depth, colorType, palette }: Layout): Uint8ClampedArray {
  const pixels = new Uint8ClampedArray(width * height);
  // Palette entries and low-depth grey levels as luminance, once: 2^depth values at most.
  let levels: Uint8ClampedArray | null = null;
  if (colorType === 3) {
    levels = new Uint8ClampedArray(256);
    for (let i = 0; i < palette!.length / 3; i++) levels[i] = luma(palette![3 * i]!, palette![3 * i + 1]!, palette![3 * i + 2]!);
  } else if (depth < 8) {
    const max = (1 << depth) - 1;
    levels = Uint8ClampedArray.from({ length: max + 1 }, (_, v) => (v * 255) / max);
  }
  const entries = colorType === 3 ? palette!.length / 3 : 256;
  let out = 0;
  for (let y = 0; y < height; y++) {
    const line = y * (stride + 1) + 1;
    if (repeats[y] === 1) {
      pixels.copyWithin(out, out - width, out);
      out += width;
    } else if (depth === 8 && colorType === 6) for (let i = line, end = line + 4 * width; i < end; i += 4) pixels[out++] = luma(raw[i]!, raw[i + 1]!, raw[i + 2]!);
    else if (depth === 8 && colorType === 2) for (let i = line, end = line + 3 * width; i < end; i += 3) pixels[out++] = luma(raw[i]!, raw[i + 1]!, raw[i + 2]!);
    else if (depth === 8 && colorType === 0) for (let i = line, end = line + width; i < end; i++) pixels[out++] = raw[i]!;
    else if (depth === 8 && colorType === 4) for (let i = line, end = line + 2 * width; i < end; i += 2) pixels[out++] = raw[i]!;
    else {
      const mask = (1 << depth) - 1;
      for (let x = 0; x < width; x++) {
        const bit = x * depth;
        const value = (raw[line + (bit >> 3)]! >> (8 - depth - (bit & 7))) & mask;
        if (value >= entries) throw new Error('palette index out of range');
        pixels[out++] = levels![value]!;
      }
    }
  }
  return pixels;
}
