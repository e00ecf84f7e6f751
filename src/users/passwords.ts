// Console passwords (docs/console.md): kept as scrypt hashes, from Node's own crypto — no library, nothing
// to keep up to date but Node. The parameters travel inside the stored text (`scrypt$N$r$p$salt$hash`), so a
// later raise of the cost leaves older hashes readable. N = 2^14, r = 8, p = 1 costs ~16 MiB and some tens of
// milliseconds per hash: a sign-in pays it once, a guesser pays it per guess, and the lockout
// (service.ts) stops a guesser after ten. The service has no test-only configuration, so tests pay the same cost.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** The shortest password a console user may set; said on the form and in docs/console.md. */
export const MIN_PASSWORD_LENGTH = 10;
/** The longest: far above any real password, and short enough that hashing it costs no more than usual. */
export const MAX_PASSWORD_LENGTH = 200;

const COST = { N: 2 ** 14, r: 8, p: 1 } as const;
const KEY_BYTES = 32;
const SALT_BYTES = 16;
const FORMAT = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9_-]+)\$([A-Za-z0-9_-]+)$/;

function derive(password: string, salt: Buffer, options: ScryptOptions, length: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // maxmem: 128 × N × r bytes, with room to spare (Node's default of 32 MiB is just enough for 2^14).
    scrypt(password.normalize('NFC'), salt, length, { ...options, maxmem: 64 * 1024 * 1024 }, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** The stored form of a new password: a fresh salt each time, so two users with one password differ. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, COST, KEY_BYTES);
  return `scrypt$${COST.N}$${COST.r}$${COST.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

/** True when `password` is the one `stored` was made from; the hashes are compared in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parts = FORMAT.exec(stored);
  if (!parts) return false;
  const expected = Buffer.from(parts[5]!, 'base64url');
  const key = await derive(password, Buffer.from(parts[4]!, 'base64url'), { N: Number(parts[1]), r: Number(parts[2]), p: Number(parts[3]) }, expected.length);
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/**
 * The hash of a password no one knows (32 random bytes, thrown away when this was made), checked against
 * when the email is unknown, so a sign-in takes about as long whether the account exists or not (the answer
 * does not tell them apart either). A constant, so that no module keeps state of its own.
 */
const DECOY_HASH = 'scrypt$16384$8$1$CzbRM86h3XNolHWjTiGjAw$qWpCsjvA8RzGTGpv54ebvK3P0K4cJZhPWkuYUQDAr-0';

export async function verifyAgainstDecoy(password: string): Promise<false> {
  await verifyPassword(password, DECOY_HASH);
  return false;
}
