// Unguessable identifiers: base62 text drawn from the operating system's CSPRNG.
import { randomBytes } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` base62 characters (5.95 bits each: 22 characters carry > 128 bits). Rejection sampling keeps every character uniform. */
export function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) text += BASE62[byte % 62]; // 248 = 4 × 62: larger bytes would bias the first characters
      if (text.length === length) break;
    }
  }
  return text;
}
