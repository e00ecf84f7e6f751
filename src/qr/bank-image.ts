// A bank's QR image (docs/rails.md, "Pay-in through a bank"): kept unchanged as the QR's qr_image, and
// decoded once into the text it encodes for qr_payload — or null when it cannot be (not a PNG, no QR
// symbol found, too large to be one). jsQR finds and reads the symbol.
//
// The decode is on the path of POST /api/v2/simple-qrs (its answer carries qr_payload, §14.3). Read the
// plain way — pngjs to RGBA, jsQR over every pixel — it cost ~8 ms of CPU for the simulator's 300 × 300
// image, more than half of such a request: jsQR's search for the symbol grows with the pixels (its
// binarizer, finder and alignment-pattern scans), and a bank draws each module as a square of several
// pixels. So a clean rendering is read the short way first: its pixels read in one pass (png-read.ts),
// the symbol's modules sampled at their centres and drawn again at one pixel a module, and jsQR reads that
// small image — about a quarter of the CPU. jsQR still locates, reads and error-corrects the symbol; the
// sampling only takes the scale out, and a wrong sampling cannot pass jsQR's format and error-correction
// checks as another text. Whatever the short way cannot read — an image of another kind, a symbol not
// alone on a light ground, modules under three pixels, any doubt — is read the plain way, as before: the
// short way answers a payload only when jsQR decoded one, never null. (It also reads some symbols jsQR
// misses at full size — fractional scales of large versions — whose qr_payload was null before.)
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { readPngLuminance, type Luminance } from './png-read.ts';

// jsqr is CommonJS with an ES-style default export: depending on the loader the function is the module or its `.default`.
type JsQr = typeof import('jsqr').default;
const jsQR: JsQr = ((jsQRModule as unknown as { default?: JsQr }).default ?? jsQRModule) as JsQr;

const DATA_URI_PREFIX = 'data:image/png;base64,';
/** A QR image has a few hundred pixels a side; anything far larger is not worth decoding. */
const MAX_SIDE = 4_000;
/** The longest payload kept (an EMV payload is at most a few hundred characters). */
const MAX_PAYLOAD = 2_000;
/** Darker than mid-grey is a dark module: a renderer's two tones are far either side of it. */
const DARK = 128;
/**
 * The short way samples one pixel a module: with fewer than 3 pixels a module, a fractional scale can put
 * a module's centre on its neighbour. Those go the plain way.
 */
const MIN_MODULE_PIXELS = 3;
/** The light border drawn around the redrawn symbol, in modules (ISO/IEC 18004's quiet zone). */
const QUIET_ZONE = 4;

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
    return decodeRedrawn(bytes) ?? decodeWhole(bytes);
  } catch {
    return null;
  }
}

/**
 * The short way: the payload, or undefined when it cannot tell (never a verdict of "no symbol").
 * Exported for its test, which checks which images it takes.
 */
export function decodeRedrawn(bytes: Buffer): string | undefined {
  try {
    const image = readPngLuminance(bytes, MAX_SIDE);
    const symbol = image && redrawnSymbol(image);
    if (!symbol) return undefined;
    // Options always given: jsQR keeps the last call's options as its defaults for the next call.
    const found = jsQR(symbol.rgba, symbol.side, symbol.side, { inversionAttempts: 'dontInvert' });
    return acceptable(found?.data) ?? undefined;
  } catch {
    return undefined;
  }
}

/** The plain way: pngjs's RGBA, jsQR over every pixel, dark-on-light and light-on-dark. */
function decodeWhole(bytes: Buffer): string | null {
  const png = PNG.sync.read(bytes);
  const found = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height, { inversionAttempts: 'attemptBoth' });
  return acceptable(found?.data);
}

function acceptable(text: string | undefined): string | null {
  return text === undefined || text === '' || text.length > MAX_PAYLOAD || text.includes('\u0000') ? null : text;
}

/**
 * The symbol of a clean rendering drawn again at one pixel a module (RGBA, for jsQR), or null when the
 * image does not look like one: the dark pixels' bounding box must be a square whose corners hold finder
 * patterns (7 modules of dark along each edge from three corners), with timing patterns that count the
 * same whole symbol (21 + 4k modules) across and down, at least MIN_MODULE_PIXELS a module. Each module
 * is then the pixel at its centre.
 */
function redrawnSymbol({ width, height, pixels }: Luminance): { rgba: Uint8ClampedArray; side: number } | null {
  let top = -1;
  let bottom = -1;
  let left = width;
  let right = -1;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let first = 0;
    while (first < width && pixels[row + first]! >= DARK) first++;
    if (first === width) continue;
    let last = width - 1;
    while (pixels[row + last]! >= DARK) last--;
    if (top < 0) top = y;
    bottom = y;
    if (first < left) left = first;
    if (last > right) right = last;
  }
  if (top < 0) return null;
  const across = right - left + 1;
  const down = bottom - top + 1;
  if (Math.abs(across - down) > 1) return null;
  const dark = (x: number, y: number) => pixels[y * width + x]! < DARK;
  const darkRun = (x: number, y: number, dx: number, dy: number) => {
    let length = 0;
    for (; x >= left && x <= right && y >= top && y <= bottom && dark(x, y); x += dx, y += dy) length++;
    return length;
  };
  /** Dark runs met from (x, y) to the box's edge, `dx`/`dy` a pixel at a time. */
  const darkRuns = (x: number, y: number, dx: number, dy: number) => {
    let count = 0;
    for (let was = false; x <= right && y <= bottom; x += dx, y += dy) {
      const now = dark(x, y);
      if (now && !was) count++;
      was = now;
    }
    return count;
  };
  // The finder patterns' outer edges: 7 modules of dark along the top and the left edge from the top-left
  // corner, along the top from the top-right one, up the left edge from the bottom-left one. They give the
  // module's size roughly (a pixel either way in 7 modules: not enough to count 177 of them).
  const runs = [darkRun(left, top, 1, 0), darkRun(left, top, 0, 1), darkRun(right, top, -1, 0), darkRun(left, bottom, 0, -1)];
  const roughModule = runs.reduce((sum, run) => sum + run, 0) / runs.length / 7;
  if (roughModule < MIN_MODULE_PIXELS) return null;
  // The count exactly, from the timing patterns (ISO/IEC 18004's row and column 6, there for this): along
  // row 6 the finders' bottom edges are a dark run each, and between them modules alternate from dark to
  // dark — (n − 15) / 2 dark ones — so n = 2 × (dark runs) + 11. Row and column must agree.
  const centreOfSix = Math.floor(6.5 * roughModule);
  const modules = 2 * darkRuns(left, top + centreOfSix, 1, 0) + 11;
  if (modules !== 2 * darkRuns(left + centreOfSix, top, 0, 1) + 11) return null;
  const moduleWidth = across / modules;
  const moduleHeight = down / modules;
  if (modules < 21 || modules > 177 || (modules - 21) % 4 !== 0 || Math.min(moduleWidth, moduleHeight) < MIN_MODULE_PIXELS) return null;
  if (runs.some((run) => Math.abs(run - 7 * moduleWidth) > moduleWidth)) return null;

  // One pixel a module; two for version 1 (21 modules), which jsQR misses at one (tried on versions 1–40).
  const scale = modules === 21 ? 2 : 1;
  const side = (modules + 2 * QUIET_ZONE) * scale;
  const rgba = new Uint8ClampedArray(side * side * 4).fill(255);
  for (let row = 0; row < modules; row++) {
    const y = top + Math.floor((row + 0.5) * moduleHeight);
    for (let column = 0; column < modules; column++) {
      if (!dark(left + Math.floor((column + 0.5) * moduleWidth), y)) continue;
      for (let dy = 0; dy < scale; dy++) {
        const at = (((row + QUIET_ZONE) * scale + dy) * side + (column + QUIET_ZONE) * scale) * 4;
        for (let dx = 0; dx < scale; dx++) rgba.fill(0, at + 4 * dx, at + 4 * dx + 3); // black; alpha stays 255
      }
    }
  }
  return { rgba, side };
}
