import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ensurePrivateDir } from '../private-files.js';
import { join } from 'node:path';

/** A secret as stored: AES-256-GCM, base64url parts. Version 1 is the only format so far. */
export interface SealedSecret {
  v: 1;
  iv: string;
  tag: string;
  data: string;
  /** Id of the key that sealed it (absent on values sealed before keys had ids: tried with every key). */
  k?: string;
}

/** A key's id: the first 8 hex digits of its SHA-256 (names the key without revealing it). */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

function decodeKey(text: string): Buffer {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
}

/**
 * Encrypts secrets at rest (channel access tokens, app secrets, verify
 * tokens) with AES-256-GCM under one 32-byte key. `aad` binds a ciphertext to
 * its owner (for example the channel id), so a sealed value copied onto
 * another record does not open.
 */
export class SecretBox {
  private readonly key: Buffer;
  /** The current key's id, written into every value it seals. */
  readonly keyId: string;
  /** Earlier keys: they still open what they sealed, until it is sealed again under the current key. */
  private readonly previous: Map<string, Buffer>;

  /** `previous`: keys rotated out (SECRETS_KEY_PREVIOUS), still able to open old values. */
  constructor(key: Buffer, previous: Buffer[] = []) {
    if (key.length !== 32 || previous.some((k) => k.length !== 32)) throw new Error('SecretBox needs 32-byte keys');
    this.key = key;
    this.keyId = keyId(key);
    this.previous = new Map(previous.filter((k) => !k.equals(key)).map((k) => [keyId(k), k]));
  }

  /** Decodes `SECRETS_KEY` (base64, base64url or hex), and earlier keys (`SECRETS_KEY_PREVIOUS`, comma-separated). */
  static fromString(text: string, previous?: string): SecretBox {
    return new SecretBox(decodeKey(text), (previous ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '').map(decodeKey));
  }

  /** True when `sealed` was not sealed under the current key: seal it again to finish a rotation. */
  stale(sealed: SealedSecret): boolean {
    return sealed.k !== this.keyId;
  }

  /**
   * The key from `SECRETS_KEY`, or else (embedded mode) the one kept in
   * `<dataDir>/secrets.key`, created on first use with mode 0600. Returns
   * null when neither is available (clustered mode without a key).
   */
  static load(configured: string | undefined, dataDir: string | null, previous?: string): SecretBox | null {
    if (configured !== undefined) return SecretBox.fromString(configured, previous);
    if (dataDir === null) return new SecretBox(randomBytes(32));
    ensurePrivateDir(dataDir);
    const file = join(dataDir, 'secrets.key');
    if (!existsSync(file)) {
      try {
        writeFileSync(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
      } catch (e) {
        // Another store of this process created it first: use that one.
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
    }
    return SecretBox.fromString(readFileSync(file, 'utf8').trim(), previous);
  }

  seal(plain: string, aad: string): SealedSecret {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(aad));
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return { v: 1, iv: iv.toString('base64url'), tag: c.getAuthTag().toString('base64url'), data: data.toString('base64url'), k: this.keyId };
  }

  /** Throws when no key opens it (wrong key, or the value was tampered with). */
  open(sealed: SealedSecret, aad: string): string {
    if (sealed.k !== undefined) {
      const key = sealed.k === this.keyId ? this.key : this.previous.get(sealed.k);
      if (key === undefined) throw new Error(`sealed under key ${sealed.k}, which this service does not have (set it in SECRETS_KEY_PREVIOUS)`);
      return this.openWith(key, sealed, aad);
    }
    let last: unknown;
    for (const key of [this.key, ...this.previous.values()]) {
      try {
        return this.openWith(key, sealed, aad);
      } catch (e) {
        last = e;
      }
    }
    throw last;
  }

  private openWith(key: Buffer, sealed: SealedSecret, aad: string): string {
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64url'));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(Buffer.from(sealed.tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(sealed.data, 'base64url')), d.final()]).toString('utf8');
  }
}
