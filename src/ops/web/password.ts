// The page's password: a salted scrypt hash written by `fieldgate web passwd`, checked at login in
// constant time. Parameters travel inside the hash so they can be raised without breaking old ones.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { parsePasswordHash } from '../../core/config/web-settings.js';

const COST = { N: 16_384, r: 8, p: 1 };
const KEY_BYTES = 32;
/** scrypt needs 128 * N * r bytes; leave room for the highest N a parsed hash may name. */
const MAX_MEMORY = 256 * 1024 * 1024;

function derive(password: string, salt: Buffer, bytes: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, bytes, { ...options, maxmem: MAX_MEMORY }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, KEY_BYTES, COST);
  return `scrypt:${COST.N}:${COST.r}:${COST.p}:${salt.toString('base64url')}:${key.toString('base64url')}`;
}

/** False for a wrong password and for a hash fieldgate cannot read (config validation refuses those first). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parsePasswordHash(stored);
  if (!parsed) return false;
  try {
    const key = await derive(password, parsed.salt, parsed.hash.length, { N: parsed.n, r: parsed.r, p: parsed.p });
    return timingSafeEqual(key, parsed.hash);
  } catch {
    return false;
  }
}
