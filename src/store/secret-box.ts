import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ensurePrivateDir } from '../private-files.js';
import { join } from 'node:path';

/** A secret as stored: AES-256-GCM, base64url parts. Version 1 is the only format so far. */
export interface SealedSecret {
  v: 1;
  iv: string;
  tag: string;
  data: string;
}

/**
 * Encrypts secrets at rest (channel access tokens, app secrets, verify
 * tokens) with AES-256-GCM under one 32-byte key. `aad` binds a ciphertext to
 * its owner (for example the channel id), so a sealed value copied onto
 * another record does not open.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('SecretBox needs a 32-byte key');
    this.key = key;
  }

  /** Decodes `SECRETS_KEY` (base64, base64url or hex). */
  static fromString(text: string): SecretBox {
    const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
    return new SecretBox(key);
  }

  /**
   * The key from `SECRETS_KEY`, or else (embedded mode) the one kept in
   * `<dataDir>/secrets.key`, created on first use with mode 0600. Returns
   * null when neither is available (clustered mode without a key).
   */
  static load(configured: string | undefined, dataDir: string | null): SecretBox | null {
    if (configured !== undefined) return SecretBox.fromString(configured);
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
    return SecretBox.fromString(readFileSync(file, 'utf8').trim());
  }

  seal(plain: string, aad: string): SealedSecret {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.key, iv);
    c.setAAD(Buffer.from(aad));
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return { v: 1, iv: iv.toString('base64url'), tag: c.getAuthTag().toString('base64url'), data: data.toString('base64url') };
  }

  /** Throws when the key is wrong or the value was tampered with. */
  open(sealed: SealedSecret, aad: string): string {
    const d = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64url'));
    d.setAAD(Buffer.from(aad));
    d.setAuthTag(Buffer.from(sealed.tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(sealed.data, 'base64url')), d.final()]).toString('utf8');
  }
}
