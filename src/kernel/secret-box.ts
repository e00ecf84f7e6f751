// Secrets the service must read back later (webhook signing secrets, onboarding links) are stored
// sealed: AES-256-GCM under a key-encryption key from configuration (ENCRYPTION_KEYS), never in clear.
// A database dump or a read replica then holds nothing that signs a webhook or opens a link. Each sealed
// value names the key that sealed it, so keys rotate: the first key of the list seals, every key opens.
// Associated data binds a sealed value to the row it belongs to (`webhook_endpoint:42`), so a value
// copied to another row does not open there.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface EncryptionKey {
  /** Short name written into every sealed value (`2026a`). */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

/** What a sealed value looks like: `v1.<key id>.<base64url of iv ‖ ciphertext ‖ tag>`. */
const SEALED = /^v1\.([A-Za-z0-9_-]{1,32})\.([A-Za-z0-9_-]+)$/;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that no configured key opens, or that was altered. The message names no secret. */
export class SecretUnreadableError extends Error {
  constructor(reason: string) {
    super(`a stored secret cannot be opened: ${reason}`);
    this.name = 'SecretUnreadableError';
  }
}

export class SecretBox {
  private readonly byId: Map<string, Buffer>;

  /** `keys[0]` seals; all of them open. */
  constructor(private readonly keys: readonly EncryptionKey[]) {
    if (keys.length === 0) throw new Error('SecretBox needs at least one key');
    for (const { key } of keys) if (key.length !== 32) throw new Error('encryption keys are 32 bytes');
    this.byId = new Map(keys.map(({ id, key }) => [id, key]));
  }

  /** The id of the key new values are sealed with. */
  get currentKeyId(): string {
    return this.keys[0]!.id;
  }

  seal(plain: string, associatedData: string): string {
    const { id, key } = this.keys[0]!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(associatedData, 'utf8'));
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `v1.${id}.${Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')}`;
  }

  open(sealed: string, associatedData: string): string {
    const match = SEALED.exec(sealed);
    if (!match) throw new SecretUnreadableError('not a sealed value');
    const key = this.byId.get(match[1]!);
    if (!key) throw new SecretUnreadableError(`it was sealed with key "${match[1]}", which ENCRYPTION_KEYS does not hold`);
    const bytes = Buffer.from(match[2]!, 'base64url');
    if (bytes.length < IV_BYTES + TAG_BYTES) throw new SecretUnreadableError('too short');
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(associatedData, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      throw new SecretUnreadableError('it was altered, or belongs to another record');
    }
  }

  /** Whether `sealed` was sealed with an older key (a re-seal moves it to the current one). */
  isSealedWithOlderKey(sealed: string): boolean {
    return SEALED.exec(sealed)?.[1] !== this.currentKeyId;
  }
}
