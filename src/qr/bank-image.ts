// A bank's QR image (docs/rails.md, "Pay-in through a bank"): kept unchanged as the QR's qr_image, and
// decoded once into the text it encodes for qr_payload — or null when it cannot be (not a PNG, no QR
// symbol found, too large to be one). ZXing (@zxing/library) reads the symbol.
//
// The decode is on the path of POST /api/v2/simple-qrs (its answer carries qr_payload, §14.3), so its CPU
// bounds QR creation through a bank. A bank's image is a rendering, not a photo: the symbol alone on a light
// ground, square, unrotated, each module a square of several pixels — what ZXing calls a pure barcode,
// whose modules can be read off a grid without searching the picture for finder and alignment patterns
// (that search was most of jsQR's CPU here, the reader before). So the pixels are read in one pass to
// luminance (png-read.ts), ZXing's global-histogram binarizer makes its bit matrix of them (cheaper than its
// hybrid one, and enough for two tones), and the symbol's grid is taken from the matrix: the first dark row
// is the top edge of the two upper finder patterns, so it gives the symbol's corner and width (a caption
// under the symbol changes neither), and the top-left finder's diagonal (7 modules) gives the module's size
// roughly. ZXing's own pure mode (QRCodeReader with PURE_BARCODE) rounds height ÷ that rough size; at a
// fractional scale (the simulator draws 49 modules and the margin, 57, in 300 pixels: modules of 5 and 6)
// the diagonal is off by up to a pixel in seven and the count comes out wrong — it read none of the
// simulator's 49-module images. Here each QR module count (21 + 4k) that fits the diagonal within a pixel
// and a half is tried, nearest first, each module sampled once at its centre with the module's size from
// the whole width, and the matrix given to ZXing's decoder: it reads format and version, corrects the
// codewords (Reed–Solomon) and decodes them, so a wrong count or misread modules fail instead of reading as
// another text, and the next count is tried. Light modules on dark are read the same way, inverted.
//
// Whatever that cannot read — modules under two pixels, a symbol among other marks, a rotated or
// photographed one — goes to ZXing's ordinary reader (finder-pattern detection, TRY_HARDER, its hybrid
// binarizer), both polarities: slower, and only for such images. It is no substitute for the pure way on a
// clean rendering: in @zxing/library 0.23 its detector mis-sizes the grid of many fractional-scale symbols
// (zxing-js/library#616; the simulator's own 45-module image among them). PNGs png-read.ts does not read
// (interlaced, 16-bit) are read by pngjs to the same luminance. Byte segments are read as UTF-8, the bank's
// EMV text: ZXing would otherwise guess the encoding of bytes that are not UTF-8 (ISO-8859-1, Shift_JIS).
import { createRequire } from 'node:module';
import type * as Zxing from '@zxing/library';
import { PNG } from 'pngjs';
import { readPngLuminance, type Luminance } from './png-read.ts';

// Only the QR reader's modules of @zxing/library (CommonJS, each module's class its `default`): the package's
// index loads every format and the browser readers too — ~110–140 ms of CPU at each start of the service
// or the CLI instead of ~40. Same classes as the index's (a test would fail on a missing path).
const require = createRequire(import.meta.url);
const zxing = <T>(path: string): T => (require(`@zxing/library/cjs/core/${path}.js`) as { default: T }).default;
const BinaryBitmap = zxing<typeof Zxing.BinaryBitmap>('BinaryBitmap');
const BitMatrix = zxing<typeof Zxing.BitMatrix>('common/BitMatrix');
const DecodeHintType = zxing<typeof Zxing.DecodeHintType>('DecodeHintType');
const GlobalHistogramBinarizer = zxing<typeof Zxing.GlobalHistogramBinarizer>('common/GlobalHistogramBinarizer');
const HybridBinarizer = zxing<typeof Zxing.HybridBinarizer>('common/HybridBinarizer');
const QRCodeReader = zxing<typeof Zxing.QRCodeReader>('qrcode/QRCodeReader');
const RGBLuminanceSource = zxing<typeof Zxing.RGBLuminanceSource>('RGBLuminanceSource');
type BitMatrixType = Zxing.BitMatrix;
type DecodeHintTypeEnum = Zxing.DecodeHintType;
type LuminanceSource = Zxing.LuminanceSource;

const DATA_URI_PREFIX = 'data:image/png;base64,';
/** A QR image has a few hundred pixels a side; anything far larger is not worth decoding. */
const MAX_SIDE = 4_000;
/** The longest payload kept (an EMV payload is at most a few hundred characters). */
const MAX_PAYLOAD = 2_000;
/** Under this many pixels a module the centre of a module can fall on its neighbour: the ordinary reader's. */
const MIN_MODULE_PIXELS = 2;

type Hints = Map<DecodeHintTypeEnum, unknown>;
const PURE_HINTS: Hints = new Map<DecodeHintTypeEnum, unknown>([[DecodeHintType.CHARACTER_SET, 'UTF-8']]);
const SEARCH_HINTS: Hints = new Map<DecodeHintTypeEnum, unknown>([[DecodeHintType.TRY_HARDER, true], [DecodeHintType.CHARACTER_SET, 'UTF-8']]);
/** QRCodeReader with its decoder (of a module matrix) in reach: the pure way samples the modules itself. */
class Reader extends QRCodeReader {
  decodeModules(bits: BitMatrixType): string {
    return this.getDecoder().decodeBitMatrix(bits, PURE_HINTS).getText();
  }
}
/** ZXing's readers keep no state between calls (QRCodeReader.reset does nothing): one serves every decode. */
const reader = new Reader();

/** The bank's base64 PNG as the QR's qr_image. */
export function bankImageDataUri(pngBase64: string): string {
  return DATA_URI_PREFIX + pngBase64;
}

/** The text a bank's PNG (base64) encodes, or null. Never throws. */
export function decodeBankQrImage(pngBase64: string): string | null {
  try {
    const bytes = Buffer.from(pngBase64, 'base64');
    // The size from the IHDR chunk (bytes 16–23) before anything is inflated: a small file may decode to
    // gigabytes of pixels.
    if (bytes.length < 24 || bytes.readUInt32BE(16) > MAX_SIDE || bytes.readUInt32BE(20) > MAX_SIDE) return null;
    const image = readPngLuminance(bytes, MAX_SIDE) ?? pngjsLuminance(bytes);
    const source = new RGBLuminanceSource(image.pixels, image.width, image.height);
    return acceptable(readPure(source) ?? readSearching(source));
  } catch {
    return null;
  }
}

/**
 * The pure-barcode way alone: the payload, or undefined when it cannot read the image as one (never a
 * verdict of "no symbol"). Exported for its test, which checks which images it takes.
 */
export function decodePure(bytes: Buffer): string | undefined {
  try {
    const image = readPngLuminance(bytes, MAX_SIDE);
    return image ? readPure(new RGBLuminanceSource(image.pixels, image.width, image.height)) : undefined;
  } catch {
    return undefined;
  }
}

function acceptable(text: string | undefined): string | null {
  return text === undefined || text === '' || text.length > MAX_PAYLOAD || text.includes('\u0000') ? null : text;
}

/** A PNG of a kind png-read.ts leaves (interlaced, 16-bit): pngjs's RGBA to the same luminance. */
function pngjsLuminance(bytes: Buffer): Luminance {
  const png = PNG.sync.read(bytes);
  const pixels = new Uint8ClampedArray(png.width * png.height);
  for (let i = 0; i < pixels.length; i++) pixels[i] = 0.2126 * png.data[4 * i]! + 0.7152 * png.data[4 * i + 1]! + 0.0722 * png.data[4 * i + 2]!;
  return { width: png.width, height: png.height, pixels };
}

/** The pure way, dark on light, then light on dark. */
function readPure(source: LuminanceSource): string | undefined {
  return readGrid(source) ?? readGrid(source.invert());
}

/**
 * The symbol read off its grid, or undefined (see the top of the file): the first dark row is the top edge
 * of the two upper finder patterns, so its first and last dark pixels give the symbol's corner and width
 * (a caption under the symbol does not change them); the top-left finder's diagonal gives the module's size
 * roughly; each QR module count that fits both is sampled and given to ZXing's decoder, nearest first.
 */
function readGrid(source: LuminanceSource): string | undefined {
  let matrix: BitMatrixType;
  try {
    matrix = new GlobalHistogramBinarizer(source).getBlackMatrix();
  } catch {
    return undefined; // no two tones to tell apart
  }
  const topLeft = matrix.getTopLeftOnBit();
  if (topLeft === null) return undefined;
  const left = topLeft[0]!;
  const top = topLeft[1]!;
  let right = matrix.getWidth() - 1;
  while (!matrix.get(right, top)) right--;
  const side = right - left + 1;
  if (top + side > matrix.getHeight() || side < 21 * MIN_MODULE_PIXELS) return undefined;
  // The finder pattern along the diagonal from the corner: 1 dark, 1 light, 3 dark, 1 light, 1 dark — seven
  // modules in five transitions, as QRCodeReader.moduleSize counts them.
  let step = 0;
  for (let transitions = 0, dark = true; transitions < 5; step++) {
    if (step >= side) return undefined;
    if (matrix.get(left + step, top + step) !== dark) {
      transitions++;
      dark = !dark;
    }
  }
  // Seven modules drawn at a fractional scale span a pixel more or less than 7 × the module's size: every
  // module count that fits the diagonal within a pixel and a half either way is a candidate, the nearest first.
  const diagonal = step - 1;
  const rough = diagonal / 7;
  if (rough < MIN_MODULE_PIXELS) return undefined;
  const candidates: number[] = [];
  for (let modules = 21; modules <= 177; modules += 4) {
    const size = side / modules;
    if (size >= MIN_MODULE_PIXELS && Math.abs(7 * size - diagonal) <= 1.5) candidates.push(modules);
  }
  candidates.sort((a, b) => Math.abs(side / a - rough) - Math.abs(side / b - rough));
  for (const modules of candidates) {
    const size = side / modules;
    const bits = new BitMatrix(modules);
    for (let y = 0; y < modules; y++) {
      const row = top + Math.floor((y + 0.5) * size);
      for (let x = 0; x < modules; x++) if (matrix.get(left + Math.floor((x + 0.5) * size), row)) bits.set(x, y);
    }
    try {
      return reader.decodeModules(bits);
    } catch {
      // not this count (or not a symbol): the next
    }
  }
  return undefined;
}

/** ZXing's ordinary reader: finder patterns searched for over the whole picture, dark on light, then light on dark. */
function readSearching(source: LuminanceSource): string | undefined {
  for (const picture of [source, source.invert()]) {
    try {
      return reader.decode(new BinaryBitmap(new HybridBinarizer(picture)), SEARCH_HINTS).getText();
    } catch {
      // not found that way
    }
  }
  return undefined;
}
