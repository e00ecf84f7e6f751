// Unguessable identifiers: base62 text drawn from the operating system's CSPRNG.
import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

// Each call into Node's CSPRNG costs ~4 µs however few bytes it returns, so bytes are drawn 4 KiB at a
// time and each is handed out once (Node's own randomUUID keeps such a cache too).
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** `length` base62 characters (5.95 bits each: 22 characters carry > 128 bits). Rejection sampling keeps every character uniform. */
export function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    const byte = randomByte();
    if (byte < 248) text += BASE62[byte % 62]; // 248 = 4 × 62: larger bytes would bias the first characters
  }
  return text;
}
